"""codeblanks-grader: the LTI tool (web), its shared layer (settings, store, queue, LTI,
outbound), the demo LMS and the dev supervisor; the workers live in workers/."""
