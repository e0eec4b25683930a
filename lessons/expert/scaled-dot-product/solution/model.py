import numpy as np

def softmax(z, eksen=-1):
    e = np.exp(z - z.max(axis=eksen, keepdims=True))
    return e / e.sum(axis=eksen, keepdims=True)

sorgu = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 2.0, 0.0, 2.0]])
anahtar = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0]])
degerler = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
boyut = sorgu.shape[-1]

skor = sorgu @ anahtar.T / np.sqrt(boyut)
agirlik = softmax(skor, eksen=-1)
print(np.round(agirlik, 3))
print(np.round(agirlik @ degerler, 3))
