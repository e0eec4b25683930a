import numpy as np
import matplotlib.pyplot as plt

def softmax(z, eksen=-1):
    e = np.exp(z - z.max(axis=eksen, keepdims=True))
    return e / e.sum(axis=eksen, keepdims=True)

def dikkat_agirliklari(sorgu, anahtar):
    skorlar = sorgu @ anahtar.T / np.sqrt(anahtar.shape[-1])
    return softmax(skorlar, eksen=-1)

def isi_haritasi(agirlik, kelimeler):
    fig, ax = plt.subplots()
    resim = ax.imshow(agirlik, cmap="viridis")
    ax.set_xticks(range(len(kelimeler)), kelimeler)
    ax.set_yticks(range(len(kelimeler)), kelimeler)
    ax.set_xlabel("anahtar (bakılan kelime)")
    ax.set_ylabel("sorgu (bakan kelime)")
    ax.set_title("Dikkat ağırlıkları")
    fig.colorbar(resim, ax=ax)
    return fig

if __name__ == "__main__":
    kelimeler = ["kedi", "sütü", "çok", "sever"]
    gomme = np.array([
        [2.0, 0.5, 0.0],
        [0.2, 2.0, 0.8],
        [0.0, 0.6, 1.2],
        [1.6, 1.2, 0.6],
    ])

    agirlik = dikkat_agirliklari(gomme, gomme)
    print(np.round(agirlik, 3))
    for kelime, satir in zip(kelimeler, agirlik):
        print(kelime, "->", kelimeler[satir.argmax()])

    isi_haritasi(agirlik, kelimeler)
    plt.show()
