import numpy as np

def konum_kodlama(n, d):
    # buraya yaz
    pass

if __name__ == "__main__":
    n, d = map(int, input().split())
    pe = konum_kodlama(n, d)
    print(np.round(pe, 3))
    print(np.allclose(np.linalg.norm(pe, axis=1), np.sqrt(d / 2)))
