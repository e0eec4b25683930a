import numpy as np

def softmax(z, eksen=-1):
    e = np.exp(z - z.max(axis=eksen, keepdims=True))
    return e / e.sum(axis=eksen, keepdims=True)

X = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 0.0, 0.0]])
rng = np.random.default_rng(0)
Wq = rng.normal(size=(4, 4))
Wk = rng.normal(size=(4, 4))
Wv = rng.normal(size=(4, 4))

sorgu = X @ Wq
anahtar = X @ Wk
deger = X @ Wv
skor = sorgu @ anahtar.T / np.sqrt(anahtar.shape[-1])
agirlik = softmax(skor, eksen=-1)
cikis = agirlik @ deger
print(cikis.shape)
print(np.round(cikis, 3))
