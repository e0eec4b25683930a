"""`codeblanks dev`: the supervisor, and the demo LMS mounted in the tool."""
