import numpy as np

def softmax(z, eksen=-1):
    e = np.exp(z - z.max(axis=eksen, keepdims=True))
    return e / e.sum(axis=eksen, keepdims=True)

skor = np.array([[1.0, 2.0, 3.0], [0.5, 1.5, 0.0], [2.0, 0.0, 1.0]])
degerler = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
n = skor.shape[0]

# buraya yaz
