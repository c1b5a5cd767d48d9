"""Vector files of the edm-pim model (`edm-vectors pim|pimconv`), shared by the benches of
edm_pim_sched and edm_pim_sched_ring."""


def load(path):
    """The file's non-empty lines, split into fields."""
    with open(path) as f:
        return [line.split() for line in f if line.strip()]


def field(sig, index, width):
    """Bits [index*width +: width] of a packed output; X/Z in a used field is an error."""
    bits = str(sig.value)
    lo = len(bits) - (index + 1) * width
    part = bits[lo : lo + width]
    assert all(c in "01" for c in part), f"{sig._name}[{index}] = {part} is not 0/1"
    return int(part, 2)


def expected_iteration(lines, i):
    """The model's outcome of the iteration whose `I` line precedes `lines[i]`: requests per
    source (`Q src dst`) and matches (`src dst tag len last`) up to the `E` line. Returns
    (requests, matches, index after the `E` line)."""
    want_q, want_m = {}, {}
    while lines[i][0] != "E":
        e = lines[i]
        if e[0] == "Q":
            want_q[int(e[1])] = int(e[2])
        else:
            s, d, tag, ln, last = (int(x) for x in e[1:])
            want_m[s] = (d, tag, ln, last)
        i += 1
    return want_q, want_m, i + 1


def check_outputs(dut, where, ports, pw, want_q, want_m):
    """Assert the requests and matches the DUT shows after an iteration equal the model's."""
    rv = int(dut.req_valid.value)
    got_q = {d: field(dut.req_src, d, pw) for d in range(ports) if rv >> d & 1}
    assert got_q == want_q, f"{where}: requests {got_q} != model {want_q}"
    mv = int(dut.match_valid.value)
    got_m = {
        s: (field(dut.match_dst, s, pw), field(dut.match_tag, s, 16), field(dut.match_len, s, 32), field(dut.match_last, s, 1))
        for s in range(ports)
        if mv >> s & 1
    }
    assert got_m == want_m, f"{where}: matches {got_m} != model {want_m}"
