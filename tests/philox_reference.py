"""An independent NumPy model of the foo random kernels (csrc/kernels/random.cu), operation for
operation: Philox4x32-10 counters, 53-bit uniforms, and Box-Muller with the kernels' own log and
sin/cos built from correctly rounded IEEE double operations (NumPy's float64 ufuncs round each
operation once and never fuse), so the kernels must agree with it bit for bit on every driver."""

import math

import numpy as np
import torch

M32 = np.uint64(0xFFFFFFFF)


def philox(g, offset, seed):
    """Philox4x32-10 of counters (g, offset) under key seed; g: uint64 array. Returns 4 arrays."""
    g = np.asarray(g, dtype=np.uint64)
    c0, c1 = g & M32, g >> np.uint64(32)
    c2 = np.full_like(g, offset & 0xFFFFFFFF)
    c3 = np.full_like(g, offset >> 32)
    k0, k1 = np.uint64(seed & 0xFFFFFFFF), np.uint64(seed >> 32)
    for _ in range(10):
        p0, p1 = np.uint64(0xD2511F53) * c0, np.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = (p1 >> np.uint64(32)) ^ c1 ^ k0, p1 & M32, (p0 >> np.uint64(32)) ^ c3 ^ k1, p0 & M32
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & M32, (k1 + np.uint64(0xBB67AE85)) & M32
    return c0, c1, c2, c3


def unit(hi, lo):
    bits = ((hi << np.uint64(21)) ^ (lo >> np.uint64(11))) & np.uint64((1 << 53) - 1)
    return bits.astype(np.float64) * (1.0 / 9007199254740992.0)


def uniforms(n, seed, offset):
    """(u0, u1) per Philox counter g = 0 .. ceil(n/2) - 1: element 2g takes u0, 2g+1 takes u1."""
    r = philox(np.arange((n + 1) // 2, dtype=np.uint64), offset, seed)
    return unit(r[0], r[1]), unit(r[2], r[3])


def interleave(a, b, n):
    out = np.empty(2 * len(a))
    out[0::2], out[1::2] = a, b
    return out[:n]


def horner(z, coefs):
    p = np.full_like(z, coefs[0])
    for c in coefs[1:]:
        p = p * z + c
    return p


def det_log(w):
    m, e = np.frexp(w)
    small = m < math.sqrt(0.5)
    m = np.where(small, m * 2.0, m)
    e = np.where(small, e - 1, e).astype(np.float64)
    f = m - 1.0
    s = f / (2.0 + f)
    p = horner(s * s, [1 / (2 * k + 1) for k in range(12, -1, -1)])
    return e * math.log(2) + (s * p) * 2.0


def det_sincos_2pi(u):
    t = u * 8.0
    o = np.floor(t).astype(np.int64)
    f = t - o
    odd = (o & 1) == 1
    phi = np.where(odd, 1.0 - f, f) * (math.pi / 4)
    z = phi * phi
    q = horner(z, [(-1) ** k / math.factorial(2 * k + 1) for k in range(9, 0, -1)])
    r = horner(z, [(-1) ** k / math.factorial(2 * k) for k in range(10, 0, -1)])
    s = phi + (phi * z) * q
    c = 1.0 + z * r
    s = np.where(odd, -s, s)
    quarter = np.where(odd, o + 1, o) // 2 % 4
    sin = np.select([quarter == 0, quarter == 1, quarter == 2], [s, c, -s], -c)
    cos = np.select([quarter == 0, quarter == 1, quarter == 2], [c, -s, -c], s)
    return sin, cos


def to_dtype(values, dtype):
    """Doubles rounded to dtype as the kernels do: 16-bit floats through float32."""
    t = torch.from_numpy(np.ascontiguousarray(values, dtype=np.float64))
    if dtype in (torch.float16, torch.bfloat16):
        t = t.to(torch.float32)
    return t.to(dtype)


def normal(n, seed, offset, mean, std, dtype):
    u0, u1 = uniforms(n, seed, offset)
    radius = std * np.sqrt(-2.0 * det_log(1.0 - u0))
    sin, cos = det_sincos_2pi(u1)
    return to_dtype(interleave(mean + radius * cos, mean + radius * sin, n), dtype)


def uniform(n, seed, offset, a, b, dtype):
    u = interleave(*uniforms(n, seed, offset), n)
    v = to_dtype(a + (b - a) * u, dtype)
    return torch.where(v.double() < b, v, to_dtype(np.array([a]), dtype))


def bernoulli(n, seed, offset, p, dtype):
    """p: a float or an array of n probabilities."""
    u = interleave(*uniforms(n, seed, offset), n)
    return torch.from_numpy(u < p).to(dtype)
