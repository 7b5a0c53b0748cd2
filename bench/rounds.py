"""Implementations timed in interleaved rounds, for bench/compare.py and bench/features.py.

Under sustained load an H100 or H200 lowers its clocks in steps within tens of milliseconds
(notes/tuning.md, section 11), so two implementations timed one after the other at a point do not
run under the same clocks, and a ratio near 1 moved by up to 13 % between two runs an hour apart.
With rounds each implementation is timed once a round, the order rotated each round (each takes
each place when the rounds are a multiple of their number; who runs right after whom stays the
same, the rotation of one cycle), and its result is the median of its rounds. No torch here: the
tests run it on any machine."""
import statistics


def interleaved(names, rounds, run):
    """run(name) for every name, `rounds` times (at least once), round r starting at name r mod
    len(names). Returns {name: [run(name) of each round, in round order]}."""
    names = list(names)
    got = {name: [] for name in names}
    for r in range(max(1, rounds)):
        k = r % len(names) if names else 0
        for name in names[k:] + names[:k]:
            got[name].append(run(name))
    return got


def median_of_rounds(results):
    """One implementation's rounds, each (result, why), as one (result, why). A result is a tuple
    with one entry a pass (forward, backward), each a time in ms or a (median, least) pair: the
    median of the rounds' times (or medians, and the least of the leasts). A round without a
    result gives the whole (None, why): an implementation that fails once is not reported."""
    if not results:
        return None, "not timed"
    for res, why in results:
        if res is None:
            return None, why
    combined = []
    for i in range(len(results[0][0])):
        values = [res[i] for res, _ in results]
        if isinstance(values[0], tuple):
            combined.append((statistics.median(v[0] for v in values), min(v[1] for v in values)))
        else:
            combined.append(statistics.median(values))
    return tuple(combined), ""
