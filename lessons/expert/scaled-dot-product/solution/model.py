import numpy as np

def softmax(z, eksen=-1):
    e = np.exp(z - z.max(axis=eksen, keepdims=True))
    return e / e.sum(axis=eksen, keepdims=True)

def agirliklar(sorgu, anahtar):
    boyut = sorgu.shape[-1]
    return softmax(sorgu @ anahtar.T / np.sqrt(boyut), eksen=-1)

def dikkat(sorgu, anahtar, degerler):
    return agirliklar(sorgu, anahtar) @ degerler

if __name__ == "__main__":
    sorgu = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 2.0, 0.0, 2.0]])
    anahtar = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0]])
    degerler = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])

    print(np.round(agirliklar(sorgu, anahtar), 3))
    print(np.round(dikkat(sorgu, anahtar, degerler), 3))
