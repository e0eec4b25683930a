import numpy as np

def softmax(z, eksen=-1):
    e = np.exp(z - z.max(axis=eksen, keepdims=True))
    return e / e.sum(axis=eksen, keepdims=True)

def bol(x, kafa_sayisi):
    # buraya yaz: (n, d) -> (h, n, d / h)
    pass

def birlestir(kafalar):
    # buraya yaz: (h, n, d / h) -> (n, d)
    pass

def cok_kafali_dikkat(sorgu, anahtar, deger, kafa_sayisi):
    # buraya yaz
    pass

if __name__ == "__main__":
    sorgu = np.array([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]])
    anahtar = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0]])
    deger = np.array([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]])

    print(bol(sorgu, 2).shape)
    print(np.round(cok_kafali_dikkat(sorgu, anahtar, deger, 2), 3))
