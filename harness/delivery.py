"""How a case's payload reaches the runner: the seam between the Session
and a target, named by the target's Capabilities.payload_delivery.

    file, loader, serial   at run time: the artefact is built once per
                           configuration, and Target.run takes each payload's
                           bytes (a file on the host, QEMU's or GVSOC's
                           loader, the board's serial link);
    compiled-in            per run: the payload is compiled into an artefact
                           of its own (Target.build with embedded_payload,
                           the library's objects from the object cache), and
                           Target.run gets no bytes. This is how a flow
                           without a loader or a link runs, one binary per
                           test; the qemu, gvsoc and host targets do it on
                           request (PTL_PAYLOAD_DELIVERY=compiled-in).

The Session asks `runnable` for what to run; RunnerContract.describe goes
the same way, so a target's describe payload arrives as its cases do.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from harness import failures
from harness.build_inputs import BuildConfig, BuildError
from harness.failures import CaseFailure
from harness.option_values import choice, from_env, given
from harness.payload import payload_as_c_source

COMPILED_IN = "compiled-in"     # the others: "file", "loader", "serial" (Capabilities.payload_delivery)
VARIABLE = "PTL_PAYLOAD_DELIVERY"


def options_from_environment(environ: Mapping[str, str], allowed: tuple[str, ...]) -> dict:
    """{"delivery": ...} from PTL_PAYLOAD_DELIVERY, one of the deliveries a
    target can do (unset or empty: none, the target's default)."""
    return given({"delivery": from_env(VARIABLE, None, lambda name, text: choice(name, text, allowed), environ)})


def check(target: str, delivery: str, allowed: tuple[str, ...]) -> str:
    """A target constructor's delivery, checked."""
    if delivery not in allowed:
        raise ValueError(f"the {target} target's payload delivery is one of {', '.join(allowed)}, not {delivery!r}")
    return delivery


def runnable(target, config: BuildConfig, artefact: Path, payload: bytes, workdir: Path) -> tuple[Path, bytes | None]:
    """What to hand Target.run for this payload: the artefact and the bytes,
    or, for a compiled-in target, an artefact built with the payload in it
    (under workdir) and no bytes. A build that fails is a build failure of
    the case."""
    if target.capabilities.payload_delivery != COMPILED_IN:
        return artefact, payload
    source = workdir / "payload_data.c"
    out = workdir / "compiled-in"
    try:
        source.write_text(payload_as_c_source(payload))
        out.mkdir(exist_ok=True)
        target.build(config, out, embedded_payload=source)
    except OSError as exc:      # a full disk, no permission: the machine's, not the case's
        raise CaseFailure(failures.ENVIRONMENT, f"cannot compile the payload in under {workdir}: "
                                                f"{exc.strerror or exc}") from None
    except BuildError as exc:
        raise CaseFailure(failures.BUILD, f"compiling the payload into the runner ({target.name}, "
                                          f"{config.fp16_format}) failed:\n{exc}") from None
    return out, None
