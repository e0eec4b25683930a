import numpy as np

def softmax(z, eksen=-1):
    # buraya yaz: subtract the maximum along `eksen` (keepdims=True) before np.exp
    pass

def agirliklar(sorgu, anahtar):
    # buraya yaz
    pass

def dikkat(sorgu, anahtar, degerler):
    # buraya yaz
    pass

if __name__ == "__main__":
    sorgu = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 2.0, 0.0, 2.0]])
    anahtar = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0]])
    degerler = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])

    print(np.round(agirliklar(sorgu, anahtar), 3))
    print(np.round(dikkat(sorgu, anahtar, degerler), 3))
