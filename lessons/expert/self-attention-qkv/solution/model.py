import numpy as np

def softmax(z, eksen=-1):
    e = np.exp(z - z.max(axis=eksen, keepdims=True))
    return e / e.sum(axis=eksen, keepdims=True)

def oz_dikkat(X, Wq, Wk, Wv):
    sorgu = X @ Wq
    anahtar = X @ Wk
    deger = X @ Wv
    skor = sorgu @ anahtar.T / np.sqrt(anahtar.shape[-1])
    agirlik = softmax(skor, eksen=-1)
    return agirlik @ deger

if __name__ == "__main__":
    X = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 0.0, 0.0]])
    rng = np.random.default_rng(0)
    Wq = rng.normal(size=(4, 4))
    Wk = rng.normal(size=(4, 4))
    Wv = rng.normal(size=(4, 4))

    cikis = oz_dikkat(X, Wq, Wk, Wv)
    print(cikis.shape)
    print(np.round(cikis, 3))
