"""The runner's contract, as the runner itself describes it.

The C op descriptions (struct ptl_op in runtime/include/ptl_runner.h) are the
one place where an op's param order, input order and output indices are
written. After each build the harness runs the runner once on the describe
payload and keeps the answer next to the artefact (contract.json). Cases are
then laid out by it: the catalogue names its params and tensors, and
`RunnerContract.layout` orders them as the op wants them, or says clearly
which names the two sides do not share.
"""
from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harness import c_header, failures
from harness.build_inputs import BuildConfig
from harness.delivery import runnable
from harness.failures import CaseFailure
from harness.kernels import kernel_tables
from harness.payload import encode_payload, payload_crc
from harness.protocol import TransportError, decode_records

DESCRIBE_OP = c_header.string("ptl_runner.h", "PTL_DESCRIBE_OP")
CONTRACT_FILE = "contract.json"


@dataclass(frozen=True)
class OpContract:
    name: str
    params: tuple[str, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    kernels: str            # "fp32", "fp16" or "none"


@dataclass(frozen=True)
class CaseLayout:
    """A case as the runner op takes it."""

    params: list[int]
    input_names: list[str]
    output_names: tuple[str, ...]   # by the tensor index the op emits


class RunnerContract:
    def __init__(self, ops: dict[str, OpContract], kernel_tables: dict[str, tuple[str, ...]]):
        self.ops = ops
        self.kernel_tables = kernel_tables

    # ---- obtaining it ----------------------------------------------------------

    @classmethod
    def parse(cls, lines: list[str]) -> "RunnerContract":
        ops, tables = {}, {}
        for line in lines:
            kind, _, rest = line.partition(" ")
            fields = rest.split("|")
            if kind == "op" and len(fields) == 5:
                name, params, inputs, outputs, kernels = fields
                ops[name] = OpContract(name, tuple(params.split()), tuple(inputs.split()),
                                       tuple(outputs.split()), kernels)
            elif kind == "kernels" and len(fields) == 2:
                tables[fields[0]] = tuple(fields[1].split())
            else:
                raise ValueError(f"unreadable DESCRIBE record: {line!r}")
        return cls(ops, tables)

    @classmethod
    def describe(cls, target, artefact: Path, config: BuildConfig, timeout: float = 120.0) -> "RunnerContract":
        """Runs the describe payload on a fresh artefact (delivered as the
        target's cases are: harness/delivery.py) and saves the answer in it.
        The harness's kernel tables must be the ones compiled in."""
        payload = encode_payload(DESCRIBE_OP, [], [], [])
        with tempfile.TemporaryDirectory(prefix="ptl-describe-") as workdir:
            path, data = runnable(target, config, artefact, payload, Path(workdir))
            raw = target.run(path, data, timeout, Path(workdir))
        try:
            run = decode_records(raw.output, payload_crc(payload))
            contract = cls.parse(run.descriptions)
        except (TransportError, ValueError) as exc:
            tail = (raw.output + raw.stderr).decode("utf-8", "replace")[-600:]
            raise CaseFailure(failures.BUILD, f"the runner built at {artefact} did not describe its ops: {exc}\n"
                                              f"{tail}") from None
        if contract.kernel_tables != kernel_tables():
            raise CaseFailure(failures.BUILD, f"the runner's kernel tables {contract.kernel_tables} are not "
                                              f"harness/kernels.py's {kernel_tables()}: a stale artefact?")
        contract.save(artefact)
        return contract

    def save(self, artefact: Path) -> None:
        (artefact / CONTRACT_FILE).write_text(json.dumps(
            {"ops": {n: [list(o.params), list(o.inputs), list(o.outputs), o.kernels] for n, o in self.ops.items()},
             "kernels": {t: list(names) for t, names in self.kernel_tables.items()}}, indent=1))

    @classmethod
    def load(cls, artefact: Path) -> "RunnerContract":
        data = json.loads((artefact / CONTRACT_FILE).read_text())
        ops = {name: OpContract(name, tuple(p), tuple(i), tuple(o), k) for name, (p, i, o, k) in data["ops"].items()}
        return cls(ops, {t: tuple(names) for t, names in data["kernels"].items()})

    # ---- using it ---------------------------------------------------------------

    def layout(self, op_name: str, params: dict[str, int], inputs: dict, outputs: dict,
               kernel_names: tuple[str, ...], where: str) -> CaseLayout:
        """Orders a case's named params and inputs as the op describes them.
        Raises CaseFailure(bad_case) naming every name the two sides do not
        share: a catalogue and a runner that disagree must not run a test."""
        op = self.ops[op_name]
        problems = []
        for what, described, given in (("params", op.params, list(params)), ("inputs", op.inputs, list(inputs))):
            missing = [n for n in described if n not in given]
            extra = [n for n in given if n not in described]
            if missing or extra:
                problems.append(f"{what}: the runner op wants {list(described)}; the catalogue gives {given}"
                                + (f" (missing {missing})" if missing else "") + (f" (unknown {extra})" if extra else ""))
        unknown_outputs = [n for n in outputs if n not in op.outputs]
        if unknown_outputs:
            problems.append(f"outputs: the reference has {unknown_outputs}, which the runner op does not emit "
                            f"(it emits {list(op.outputs)})")
        if op.kernels == "none":
            if kernel_names != ("direct",) and len(kernel_names) != 1:
                problems.append(f"kernels: the runner op takes no kernel index, the catalogue names {kernel_names}")
        elif tuple(kernel_names) != self.kernel_tables.get(op.kernels):
            problems.append(f"kernels: the runner op indexes the {op.kernels} table, the catalogue names "
                            f"{kernel_names}")
        if problems:
            raise CaseFailure(failures.BAD_CASE, f"catalogue and runner op {op_name} disagree:\n  "
                                                 + "\n  ".join(problems) + f"\n{where}")
        return CaseLayout([int(params[n]) for n in op.params], list(op.inputs), op.outputs)
