"""An independent NumPy model of the foo random kernels (csrc/kernels/ops/random.cu), operation for
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


def words(n, seed, offset):
    """The two 32-bit words (hi, lo) of each of n elements: element 2g takes (r0, r1), 2g+1 (r2, r3)."""
    r = philox(np.arange((n + 1) // 2, dtype=np.uint64), offset, seed)
    hi, lo = np.empty(2 * len(r[0]), np.uint64), np.empty(2 * len(r[0]), np.uint64)
    hi[0::2], lo[0::2], hi[1::2], lo[1::2] = r
    return hi[:n], lo[:n]


def det_exp(x):
    x = np.asarray(x, dtype=np.float64)
    k = np.rint(x * 1.4426950408889634)
    r = (x - k * 6.93147180369123816490e-01) - k * 1.90821492927058770002e-10
    p = horner(r, [1 / math.factorial(j) for j in range(14, -1, -1)])
    e = np.clip(k, -1100, 1100).astype(np.int64)
    low, high = e < -1022, e > 1023
    out = np.where(low, p * np.ldexp(1.0, np.where(low, e + 64, 0)) * np.ldexp(1.0, -64),
                   np.where(high, p * np.ldexp(1.0, np.where(high, e - 1, 0)) * 2.0,
                            p * np.ldexp(1.0, np.clip(e, -1022, 1023))))
    out = np.where(x > 709.782712893384, np.inf, out)
    out = np.where(x < -745.1332191019412, 0.0, out)
    return np.where(np.isnan(x), x, out)


def normal_doubles(n, seed, offset, mean, std):
    u0, u1 = uniforms(n, seed, offset)
    radius = std * np.sqrt(-2.0 * det_log(1.0 - u0))
    sin, cos = det_sincos_2pi(u1)
    return interleave(mean + radius * cos, mean + radius * sin, n)


HALF_EPS = {torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8, torch.float32: 2.0**-24, torch.float64: 2.0**-53}


def log_normal(n, seed, offset, mean, std, dtype):
    return to_dtype(det_exp(normal_doubles(n, seed, offset, mean, std)), dtype)


def exponential(n, seed, offset, lambd, dtype):
    u = interleave(*uniforms(n, seed, offset), n)
    lg = np.minimum(det_log(1.0 - u), -HALF_EPS[dtype])
    return to_dtype(-lg / lambd, dtype)


def cauchy(n, seed, offset, median, sigma, dtype):
    u = interleave(*uniforms(n, seed, offset), n)
    sin, cos = det_sincos_2pi(np.where(u == 0.0, 2.0**-55, u * 0.5))
    return to_dtype(median - sigma * (cos / sin), dtype)


def geometric(n, seed, offset, p, dtype):
    u = interleave(*uniforms(n, seed, offset), n)
    trials = np.maximum(np.ceil(det_log(1.0 - u) / math.log1p(-p)), 1.0)
    if dtype.is_floating_point:
        return to_dtype(trials, dtype)
    limit = float(torch.iinfo(dtype).max)
    return torch.from_numpy(np.minimum(trials, limit).astype(np.int64)).to(dtype)


def random_ints(n, seed, offset, range_, base, dtype):
    """base + bits % range as int64, cast to dtype; 32-bit bits below range 2^32; range 0: 2^64."""
    hi, lo = words(n, seed, offset)
    wide = range_ == 0 or range_ >= 2**32
    bits = (hi << np.uint64(32)) | lo if wide else hi
    if range_ == 0:
        values = bits.view(np.int64)
    else:
        values = ((bits % np.uint64(range_)) + np.uint64(base % 2**64)).view(np.int64)
    return torch.from_numpy(values.copy()).to(dtype)


def rrelu(x, seed, offset, lower, upper):
    """Training-mode rrelu_with_noise of a CPU tensor x: (out, noise)."""
    opmath = torch.float64 if x.dtype == torch.float64 else torch.float32
    lo, hi = (float(torch.tensor(v, dtype=opmath)) for v in (lower, upper))
    u = interleave(*uniforms(x.numel(), seed, offset), x.numel())
    r = torch.from_numpy(lo + (hi - lo) * u).to(opmath).reshape(x.shape)
    xo = x.to(opmath)
    negative = xo <= 0
    out = torch.where(negative, xo * r, xo).to(x.dtype)
    noise = torch.where(negative, r, torch.ones_like(r)).to(x.dtype)
    return out, noise


def randperm(n, seed, offset):
    hi, lo = words(n, seed, offset)
    keys = (hi << np.uint64(32)) | lo
    return torch.from_numpy(np.lexsort((np.arange(n), keys)).astype(np.int64))


def element_uniforms(count, seed, offset):
    return interleave(*uniforms(count, seed, offset), count)


def multinomial(probs, n_sample, replacement, seed, offset):
    """probs: a 2-D CPU tensor of weights. As kernels/ops/multinomial.cu, bit for bit."""
    p = probs.double().numpy()
    rows, n_cat = p.shape
    out = np.empty((rows, n_sample), np.int64)
    if not replacement:
        u = element_uniforms(rows * n_cat, seed, offset).reshape(rows, n_cat)
        keys = p / -np.minimum(det_log(1.0 - u), -(2.0**-53))
        for r in range(rows):
            out[r] = np.lexsort((np.arange(n_cat), -keys[r]))[:n_sample]
        return torch.from_numpy(out)
    threads = 256
    chunk = -(-n_cat // threads)
    u = element_uniforms(rows * n_sample, seed, offset).reshape(rows, n_sample)
    for r in range(rows):
        totals = [0.0] * threads
        for t in range(threads):
            for c in range(t * chunk, min(t * chunk + chunk, n_cat)):
                totals[t] += p[r, c]
        run, starts = 0.0, []
        for t in range(threads):
            starts.append(run)
            run += totals[t]
        sums = np.empty(n_cat)
        for t in range(threads):
            run = starts[t]
            for c in range(t * chunk, min(t * chunk + chunk, n_cat)):
                run += p[r, c]
                sums[c] = run
        total = sums[-1]
        for j in range(n_sample):
            k = int(np.searchsorted(sums, u[r, j] * total, side="right"))
            out[r, j] = k if k < n_cat else int(np.searchsorted(sums, total, side="left"))
    return torch.from_numpy(out)
