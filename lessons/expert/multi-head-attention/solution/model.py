import numpy as np

def softmax(z, eksen=-1):
    e = np.exp(z - z.max(axis=eksen, keepdims=True))
    return e / e.sum(axis=eksen, keepdims=True)

sorgu = np.array([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]])
anahtar = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0]])
deger = np.array([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]])
n, d = sorgu.shape
kafa_sayisi = 2
kafa_boyutu = d // kafa_sayisi

def bol(x):
    return x.reshape(n, kafa_sayisi, kafa_boyutu).transpose(1, 0, 2)

sorgu_k, anahtar_k, deger_k = bol(sorgu), bol(anahtar), bol(deger)
skor = sorgu_k @ anahtar_k.transpose(0, 2, 1) / np.sqrt(kafa_boyutu)
agirlik = softmax(skor, eksen=-1)
kafalar = agirlik @ deger_k
cikis = kafalar.transpose(1, 0, 2).reshape(n, d)
print(skor.shape)
print(np.round(cikis, 3))
