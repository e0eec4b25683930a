import numpy as np

def konum_kodlama(n, d):
    konum = np.arange(n)[:, None]
    i = np.arange(0, d, 2)
    aci = konum / 10000 ** (i / d)
    pe = np.zeros((n, d))
    pe[:, 0::2] = np.sin(aci)
    pe[:, 1::2] = np.cos(aci)
    return pe

if __name__ == "__main__":
    n, d = map(int, input().split())
    pe = konum_kodlama(n, d)
    print(np.round(pe, 3))
    print(np.allclose(np.linalg.norm(pe, axis=1), np.sqrt(d / 2)))
