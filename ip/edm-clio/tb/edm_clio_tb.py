"""Helpers shared by the translator's benches (ip/edm-clio/tb: xlate, chain, req,
cosim), on top of the ip-wide bench base (`ip/tb_common/tb_base.py`: clock,
reset, seed). Constants come from the generated EDM package, never restated."""

import os
import re
from pathlib import Path

#: Translator slots per node (clio_wire::edm_clio::SLOTS, from the generated edm_pkg.sv).
SLOTS = int(re.search(r"EC_SLOTS\s*=\s*(\d+)",
                      (Path(__file__).resolve().parents[2] / "edm/rtl/edm_pkg.sv").read_text()).group(1))

#: Bytes per beat of the card's H2C/C2H streams and memory words.
BEAT = 8


def vectors(var, tool):
    """The vector file named by environment variable `var` (written by `tool`; run.sh sets it)."""
    path = os.environ.get(var)
    assert path, f"set {var} to a file from `{tool}`"
    return path


def r8(n):
    """`n` rounded up to whole 8-byte words."""
    return (n + 7) & ~7


def stream_beats(packets):
    """The H2C stream of `packets`, back to back: (bytes of the beat, tlast) per beat."""
    beats = []
    for p in packets:
        chunks = [p[i:i + BEAT] for i in range(0, len(p), BEAT)]
        beats += [(c, j == len(chunks) - 1) for j, c in enumerate(chunks)]
    return beats


def keep_bytes(tdata, tkeep, what="a beat"):
    """The bytes of one stream beat (tkeep must be contiguous from lane 0; `what` names
    the beat in the failure)."""
    keep = int(tkeep)
    n = bin(keep).count("1")
    assert keep == (1 << n) - 1, f"{what}: keep {keep:#x} not contiguous"
    return int(tdata).to_bytes(BEAT, "little")[:n]


def load_cosim(path):
    """An `edm-clio-cosim` trace: the packets (P), the model's answers (A) and its
    counters (K: refused, carried, timeouts, bad, READ answers read again)."""
    pkts, answers, k = [], [], None
    with open(path) as f:
        for line in f:
            op = line.split()
            if op[0] == "P":
                pkts.append(bytes.fromhex(op[1]))
            elif op[0] == "A":
                answers.append(bytes.fromhex(op[1]))
            elif op[0] == "K":
                k = tuple(int(v) for v in op[1:])
    return pkts, answers, k


def load_refusals(path):
    """The leading refused packets of an `edm-clio-cosim` trace (R): (field at fault,
    the card's own answer or None), one per refusal kind."""
    with open(path) as f:
        return [(op[1], None if op[2] == "-" else bytes.fromhex(op[2]))
                for op in (line.split() for line in f) if op[0] == "R"]


def check_refusals(path, frames):
    """Each refusal kind's answer is among the card's C2H frames, byte for byte (a runt
    gets none); returns how many were answered."""
    answered = 0
    for fld, answer in load_refusals(path):
        if answer is None:
            continue
        assert answer in frames, (
            f"the card did not answer the packet it refused on {fld} as the model does: "
            f"want {answer.hex()}, frames of that request id: "
            f"{[fr.hex() for fr in frames if fr[4:12] == answer[4:12]]}"
        )
        answered += 1
    return answered
