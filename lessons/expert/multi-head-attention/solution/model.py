import numpy as np

def softmax(z, eksen=-1):
    e = np.exp(z - z.max(axis=eksen, keepdims=True))
    return e / e.sum(axis=eksen, keepdims=True)

def bol(x, kafa_sayisi):
    n, d = x.shape
    return x.reshape(n, kafa_sayisi, d // kafa_sayisi).transpose(1, 0, 2)

def birlestir(kafalar):
    h, n, kafa_boyutu = kafalar.shape
    return kafalar.transpose(1, 0, 2).reshape(n, h * kafa_boyutu)

def cok_kafali_dikkat(sorgu, anahtar, deger, kafa_sayisi):
    sorgu_k = bol(sorgu, kafa_sayisi)
    anahtar_k = bol(anahtar, kafa_sayisi)
    deger_k = bol(deger, kafa_sayisi)
    kafa_boyutu = sorgu_k.shape[-1]
    skor = sorgu_k @ anahtar_k.transpose(0, 2, 1) / np.sqrt(kafa_boyutu)
    agirlik = softmax(skor, eksen=-1)
    return birlestir(agirlik @ deger_k)

if __name__ == "__main__":
    sorgu = np.array([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]])
    anahtar = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0]])
    deger = np.array([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]])

    print(bol(sorgu, 2).shape)
    print(np.round(cok_kafali_dikkat(sorgu, anahtar, deger, 2), 3))
