"""The median's sign-test interval, as blobbench computes it (docs/METHODS.md, "How
blobbench measures"): shared by the benches that set blobbench beside a peer."""
from math import comb


def sign_test(values):
    """[x(k), x(n+1-k)] of the sorted values with the largest k whose exact
    coverage is >= 95% (k = 1, min..max, with its own coverage when even that
    falls short), and that coverage."""
    v, n = sorted(values), len(values)
    cover = lambda k: 1 - 2 * sum(comb(n, i) for i in range(k)) / 2 ** n
    k = 1
    while k < n // 2 and cover(k + 1) >= 0.95:
        k += 1
    return v[k - 1], v[n - k], cover(k)
