import numpy as np

n = 3
d = 4

# buraya yaz
