import numpy as np

def softmax(z, eksen=-1):
    e = np.exp(z - z.max(axis=eksen, keepdims=True))
    return e / e.sum(axis=eksen, keepdims=True)

def nedensel_maske(n):
    # buraya yaz
    pass

def maskeli_agirlik(skor):
    # buraya yaz
    pass

if __name__ == "__main__":
    skor = np.array([[1.0, 2.0, 3.0], [0.5, 1.5, 0.0], [2.0, 0.0, 1.0]])
    degerler = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])

    agirlik = maskeli_agirlik(skor)
    print(np.round(agirlik, 3))
    cikis = agirlik @ degerler
    print(np.allclose(cikis[0], degerler[0]))
