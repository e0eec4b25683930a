import numpy as np

n = 3
d = 4

konum = np.arange(n)[:, None]
i = np.arange(0, d, 2)
aci = konum / 10000 ** (i / d)
pe = np.zeros((n, d))
pe[:, 0::2] = np.sin(aci)
pe[:, 1::2] = np.cos(aci)
print(np.round(pe, 3))
print(np.allclose(np.linalg.norm(pe, axis=1), np.sqrt(d / 2)))
