"""Independent reference values for `orthomask_dp::device` and `orthomask_dp::gaussian_mechanism`.

Run once with SciPy 1.17.1 and mpmath 1.4.1 (`python device_mechanism_reference.py`); the printed
numbers are copied, with this file cited, into `tests/device_mechanism.rs` and
`tests/gaussian_mechanism_reference.rs`. Nothing here shares code with the Rust crate:

* the Gaussian mechanism's profile (Balle & Wang 2018, Theorem 8) in mpmath at 50 digits;
* the masked complement's delta (M6) with `scipy.stats.ncx2.sf` (Boost);
* the best split of epsilon (D9) by a 4001-point grid refined with bounded Brent
  (`scipy.optimize.minimize_scalar`);
* the calibrated sigma (D10) with `scipy.optimize.brentq` (xtol = rtol = 1e-14);
* today's sigma, seed 004 eq. (13) for n_s - 1 rows, with `ncx2.isf` and `brentq`.
"""
from math import exp, sqrt

import numpy as np
from mpmath import mp, mpf, ncdf, exp as mexp
from scipy.optimize import brentq, minimize_scalar
from scipy.stats import ncx2, norm

mp.dps = 50


def gaussian_delta_mp(sens, sigma, eps):
    s, d, e = mpf(sens), mpf(sigma), mpf(eps)
    return ncdf(s / (2 * d) - e * d / s) - mexp(e) * ncdf(-s / (2 * d) - e * d / s)


def gaussian_delta(sens, sigma, eps):
    return norm.cdf(sens / (2 * sigma) - eps * sigma / sens) - exp(eps) * norm.cdf(
        -sens / (2 * sigma) - eps * sigma / sens)


def complement_delta(sigma, eps2, n_prime, p, a):
    lam, half_gap = a * a, a * a / 2  # sharpened bounds with a = d
    k = 2 * (n_prime - p)
    slack = sigma * sigma * eps2 - half_gap
    if slack <= 0:
        return 1.0
    return ncx2.sf(k * slack / lam, k, a * a / sigma ** 2)


def best_split(sigma, eps, p, ns):
    a = 2 * sqrt(p) * sqrt(1 - 1 / ns)
    sens = 2 * sqrt(p) / sqrt(ns)
    total = lambda e1: gaussian_delta(sens, sigma, e1) + complement_delta(sigma, eps - e1, ns - 1, p, a)
    grid = np.linspace(0, eps, 4001)
    values = [total(x) for x in grid]
    i = int(np.argmin(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    r = minimize_scalar(total, bounds=(lo, hi), method='bounded', options={'xatol': 1e-15})
    return (r.fun, r.x) if r.fun < values[i] else (values[i], grid[i])


def calibrate(eps, delta, p, ns):
    g = lambda s: best_split(s, eps, p, ns)[0] - delta
    hi = 1.0
    while g(hi) > 0:
        hi *= 2
    lo = hi / 2
    while g(lo) <= 0:
        lo /= 2
    return brentq(g, lo, hi, xtol=1e-14, rtol=1e-14)


def paper_sigma(eps, delta, p, ns):
    n = ns - 1
    c = (2 * sqrt(p) + 1) / (2 * (n - p))
    g = lambda s: c * ncx2.isf(delta, 2 * (n - p), p / s ** 2) + sqrt(p) - s * s * eps
    return brentq(g, 0.5, 1e5, xtol=1e-14, rtol=1e-15)


if __name__ == '__main__':
    print('# Gaussian mechanism profile, mpmath 50 digits: (sens, sigma, eps) -> delta')
    for case in [(1.0, 1.0, 0.5), (0.2, 8.56, 0.0005), (0.4, 3.0, 1.0), (1.0, 4.0, 1.0),
                 (2.0, 1.0, 3.0), (0.05, 10.0, 0.01), (1.0, 0.3, 10.0)]:
        print(case, mp.nstr(gaussian_delta_mp(*case), 17))
    print('# device calibration: (eps, delta, p, n_s) -> sigma*, delta at sigma*, paper sigma')
    for (eps, delta, p, ns) in [(0.5, 1e-5, 1, 100), (1.0, 1e-6, 5, 200), (0.1, 0.01, 1, 101),
                                (0.9, 1e-3, 20, 500)]:
        s = calibrate(eps, delta, p, ns)
        print((eps, delta, p, ns), repr(s), repr(best_split(s, eps, p, ns)), repr(paper_sigma(eps, delta, p, ns)))
