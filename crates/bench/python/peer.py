"""The numpy peer of the Orthomask benchmark: TM² the way a competent numpy user writes it.

Every random orthogonal matrix is formed densely from `numpy.linalg.qr` of a Gaussian matrix with
the signs of diag(R) folded into Q (without the fold the result is not Haar). Left masks that must
keep the all-ones vector fixed are built as A = H · diag(1, U) · H with U Haar on O(n−1) and H the
Householder reflector exchanging e₁ and 1/√n — one QR plus two rank-one updates, cheaper than the
papers' two Gram–Schmidt matrices (so the peer gets the benefit of the doubt). Products use `@`.

Usage (run by the benchmark binary, one workload per process so peak RSS is per workload):

    python peer.py record   --p=P --answers=A --data=DIR [--reps=R]
    python peer.py pipeline --n=N --answers=A --p2=P2 --sigma=S [--cohort=M] --data=DIR [--reps=R]
    python peer.py stream   --n=N --answers=A --p2=P2 --sigma=S (--cohort=M | --cohorts=M1,M2,…)
                            [--scaled] --data=DIR [--no-trace]

`stream` is the cohort pipeline of `orthomask pipeline` at scale, streaming as it does: the input
is read cohort by cohort, each cohort is masked densely, only the n × p₁ unmasked rows are kept,
and the collector's A₁ is never formed: A₁M is drawn by orbit sampling (the law of A₁M for A₁ Haar
with A₁1 = 1, in O(n p₁²); crates/core/src/mask/orbit.rs gives the argument), as orthomask's
collector does from 512 participants on. With --scaled the devices scale each answer to [−1, 1]
by its range (here, as orthomask does without --range, the range observed in the data: one more
streaming pass) and carry the QA entry as 888/|888| = 1, so that σ is on the scale orthomask chose
it for; the collector maps the unmasked columns back (every left mask keeps 1ₙ fixed, so this
gives exactly A₂X₁; crates/core/src/scaling.rs).

Prints one line `RESULT seconds=… heap_bytes=… rss_bytes=… check=…`: the median wall time,
the tracemalloc peak (numpy reports its array buffers to tracemalloc; LAPACK's internal work
space is not included), the process's peak resident set (ru_maxrss), and a correctness check
(relative error of ‖xB‖ for a record, of XᵀX for the pipeline).
"""

import resource
import sys
import time
import tracemalloc

import numpy as np

QA = 888.0


def haar(d, rng):
    """Haar-distributed d×d orthogonal matrix: QR of a Gaussian matrix with diag(R)'s signs folded in."""
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.sign(np.diag(r))


def haar_ones_fixed(n, rng):
    """Haar on {A ∈ O(n): A·1 = 1}: A = H·diag(1, U)·H, H the reflector with H·e₁ = 1/√n."""
    a = np.zeros((n, n))
    a[0, 0] = 1.0
    a[1:, 1:] = haar(n - 1, rng)
    w = np.full(n, 1.0 / np.sqrt(n))
    w[0] -= 1.0
    w /= np.linalg.norm(w)
    a -= 2.0 * np.outer(w, w @ a)
    a -= 2.0 * np.outer(a @ w, w)
    return a


def ones_reflector(n):
    """The unit vector w of H = I − 2wwᵀ, the Householder reflector with H·e₁ = 1/√n."""
    w = np.full(n, 1.0 / np.sqrt(n))
    w[0] -= 1.0
    return w / np.linalg.norm(w)


def reflect(w, m):
    """m ← H·m in place for H = I − 2wwᵀ: a rank-one update, H is never formed."""
    m -= np.outer(2.0 * w, w @ m)


def cohort_sizes(n, m):
    """orthomask's split: ceil(n/m) cohorts whose sizes differ by at most one, larger first."""
    count = -(-n // m)
    base, extra = divmod(n, count)
    return [base + (k < extra) for k in range(count)]


def load(data, name):
    rows, cols = (int(v) for v in open(f"{data}/{name}.shape").read().split())
    return np.fromfile(f"{data}/{name}.f64", dtype="<f8").reshape(rows, cols)


def record(p, answers, data, rng):
    x = load(data, f"record-{answers}")[0]
    p2 = p - answers - 1
    sigma = 100.0 * max(5.0 * answers, QA)
    padded = np.concatenate([x, [QA], sigma * rng.standard_normal(p2)])
    b = haar(p, rng)
    masked = padded @ b
    return abs(np.linalg.norm(masked) / np.linalg.norm(padded) - 1.0)


def pipeline(n, answers, p2, sigma, cohort, data, rng):
    raw = load(data, f"survey-{n}x{answers}")
    x1 = np.hstack([raw, np.full((n, 1), QA)])
    p1 = x1.shape[1]
    p = p1 + p2
    m = cohort or n
    released_parts = []
    for start in range(0, n, m):
        part = x1[start:start + m]
        k = part.shape[0]
        padded = np.hstack([part, sigma * rng.standard_normal((k, p2))])
        b = haar(p, rng)                      # the collector's right mask, sent to devices
        uploads = padded @ b                  # devices
        a2 = haar_ones_fixed(k, rng)          # the provider
        doubly = a2 @ uploads
        unmasked = doubly @ b.T[:, :p1]       # the collector keeps p1 columns
        if np.abs(unmasked[:, p1 - 1] - QA).max() > 1e-6 * (QA + np.abs(doubly).max()):
            raise SystemExit("QA check failed")
        released_parts.append(unmasked)
    stacked = np.vstack(released_parts)
    a1 = haar_ones_fixed(n, rng)
    release = a1 @ stacked
    gram = x1.T @ x1
    return np.abs(release.T @ release - gram).max() / np.abs(gram).max()


def observed_ranges(path, n, cols, chunk=1 << 16):
    """Each column's (centre, half-width) from its observed range, read in chunks; a constant
    column v gets v ± max(|v|, 1), as orthomask does."""
    lo, hi = np.full(cols, np.inf), np.full(cols, -np.inf)
    with open(path, "rb") as f:
        for start in range(0, n, chunk):
            part = np.fromfile(f, dtype="<f8", count=min(chunk, n - start) * cols)
            part = part.reshape(-1, cols)
            lo, hi = np.minimum(lo, part.min(axis=0)), np.maximum(hi, part.max(axis=0))
    w = np.maximum(np.abs(lo), 1.0)
    lo, hi = np.where(lo < hi, lo, lo - w), np.where(lo < hi, hi, hi + w)
    return (lo + hi) / 2.0, (hi - lo) / 2.0


def stream(n, answers, p2, sigma, sizes, scaled, data, rng):
    name = f"stream-{n}x{answers}"
    path = f"{data}/{name}.f64"
    rows, cols = (int(v) for v in open(f"{data}/{name}.shape").read().split())
    if (rows, cols) != (n, answers) or sum(sizes) != n:
        raise SystemExit(f"{name}: shape {rows}×{cols}, cohorts of {sum(sizes)} rows")
    p1 = answers + 1
    p = p1 + p2
    # The record's scale: answers to [−1, 1], the QA entry to 1 (scaled), or as they are.
    if scaled:
        centre, half = observed_ranges(path, n, cols)
        centre, half = np.append(centre, 0.0), np.append(half, abs(QA))
    else:
        centre, half = np.zeros(p1), np.ones(p1)
    qa_entry = QA / half[-1]
    kept = np.empty((n, p1))                  # the collector keeps n × p₁, as orthomask does
    gram = np.zeros((p1, p1))                 # x1ᵀx1, for the check
    start = 0
    with open(path, "rb") as f:
        for k in sizes:
            part = np.fromfile(f, dtype="<f8", count=k * cols).reshape(k, cols)
            x1 = np.hstack([part, np.full((k, 1), QA)])
            gram += x1.T @ x1
            padded = np.hstack([(x1 - centre) / half, sigma * rng.standard_normal((k, p2))])
            b = haar(p, rng)                  # the collector's right mask, sent to devices
            uploads = padded @ b              # devices
            a2 = haar_ones_fixed(k, rng)      # the provider
            doubly = a2 @ uploads
            unmasked = doubly @ b.T[:, :p1]   # the collector keeps p1 columns
            if np.abs(unmasked[:, p1 - 1] - qa_entry).max() > \
                    1e-6 * (abs(qa_entry) + np.abs(doubly).max()):
                raise SystemExit("QA check failed")
            kept[start:start + k] = unmasked * half + centre
            start += k
    # A₁M by orbit sampling: with W = H·M = [W₀; N] and N = Q_N R_N, A₁M has the law of
    # H·[W₀; G R_N], G the sign-folded thin Q of a fresh (n−1) × q Gaussian matrix.
    w = ones_reflector(n)
    reflect(w, kept)                          # W = H·M
    q = min(n - 1, p1)
    r_n = np.linalg.qr(kept[1:], mode="r")[:q]
    q_z, r_z = np.linalg.qr(rng.standard_normal((n - 1, q)))
    q_z *= np.sign(np.diag(r_z))              # G
    kept[1:] = q_z @ r_n
    del q_z
    reflect(w, kept)                          # the release H·[W₀; G R_N]
    return np.abs(kept.T @ kept - gram).max() / np.abs(gram).max()


def main(argv):
    kind, options = argv[0], dict(a[2:].split("=", 1) for a in argv[1:] if "=" in a)
    # --no-trace: a user's script, timed as a whole process, runs without tracemalloc.
    trace = "--no-trace" not in argv
    reps = int(options.get("reps", 1))
    rng = np.random.default_rng(20260)
    times, peak, check = [], 0, 0.0
    for _ in range(reps):
        if trace:
            tracemalloc.start()
        start = time.perf_counter()
        if kind == "record":
            err = record(int(options["p"]), int(options["answers"]), options["data"], rng)
        elif kind == "stream":
            n = int(options["n"])
            if "cohorts" in options:
                sizes = [int(v) for v in options["cohorts"].split(",")]
            else:
                sizes = cohort_sizes(n, int(options["cohort"]))
            err = stream(n, int(options["answers"]), int(options["p2"]),
                         float(options["sigma"]), sizes, "--scaled" in argv, options["data"], rng)
        elif kind == "pipeline":
            cohort = int(options["cohort"]) if "cohort" in options else None
            err = pipeline(int(options["n"]), int(options["answers"]), int(options["p2"]),
                           float(options["sigma"]), cohort, options["data"], rng)
        else:
            raise SystemExit(f"unknown workload {kind}")
        times.append(time.perf_counter() - start)
        if trace:
            peak = max(peak, tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
        check = max(check, err)
    times.sort()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"RESULT seconds={times[len(times) // 2]:e} heap_bytes={peak:e} "
          f"rss_bytes={rss:e} check={check:e}")


if __name__ == "__main__":
    main(sys.argv[1:])
