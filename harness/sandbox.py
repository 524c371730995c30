"""A sandbox for child processes, built from Linux namespaces with the kernel's own calls (ctypes; no bubblewrap,
nothing to install). Every child that runs a candidate's code goes through it (process.child_argv; the policy of
each is decided in eval/confine.py).

How: `command(policy, argv)` puts a launcher in front of a child's command line: this very file, run by
`python -I -S -c` (stdlib only, no harness package: fast, and deaf to the child's PYTHON* variables), which
  1. unshare(2)s a user namespace and, owned by it, mount, PID, IPC, UTS and (unless policy.network) network
     namespaces, and maps the caller's uid and gid onto themselves (setgroups denied): inside, the same user,
     with capabilities over the new namespaces alone, and only until it execs;
  2. forks the new PID namespace's init (PID 1 there), which builds the mount view, forks the command and
     waits: it forwards signals, reaps orphans and hands the command's wait status to the launcher when the
     command ends. The kernel kills every process left in the namespace when its init exits, and the init
     dies with the launcher (PR_SET_PDEATHSIG), which exits as the command did (a signal as the same signal);
  3. the command starts with no new privileges (PR_SET_NO_NEW_PRIVS), no capabilities (the bounding set
     emptied too: it matters where the caller is root), the policy's resource limits, TMPDIR in scratch and its
     working directory looked up again in the new view. Its environment is the one given to Popen.

What each namespace gives:
  user     the right to build the others unprivileged; uids and gids inside are the caller's own
  mount    the machine's file tree, all of it read-only (mount_setattr(2), AT_RECURSIVE), but the scratch
           directory and policy.writable_extra, bound over themselves writable; each of policy.hidden (the results
           store, its -wal and -shm) covered by an empty, unreadable, read-only file or directory; a /dev of its
           own with null, zero, full, random, urandom, tty, a private tmpfs /dev/shm and, with policy.gpu alone,
           /dev/nvidia* and /dev/dri (no disks: writing a device ignores a read-only mount); a /proc of its own,
           /proc/sys read-only (sysctls check only the uid). Mounts copied from the caller's namespace are
           locked: a namespace made inside cannot make them writable or uncover what they cover
  pid      the caller and every process outside are invisible and out of reach of kill(2) and ptrace(2);
           nothing started inside (a daemon, a setsid()) outlives the init
  network  a loopback device of its own and nothing else: no connection leaves, none reaches the machine's
           127.0.0.1 or its abstract Unix sockets
  ipc, uts the machine's System V IPC objects and POSIX message queues, and its hostname, out of reach

Not covered: the system calls themselves (no seccomp filter: all of the kernel's surface is reachable); Unix
sockets with a path (connect(2) needs no write access: hide them with policy.hidden); reading whatever the user
may read, policy.hidden aside (Landlock could narrow it); the GPU (a GPU child shares the device, its memory and
the driver with everything else on it); memory and disk use (no cgroup; RLIMIT_AS would break CUDA's huge
reservations); RLIMIT_NPROC where the caller is root (the kernel does not apply it to uid 0).
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import functools
import json
import os
import resource
import signal
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

SETUP_FAILED = 125  # the launcher's exit status when it could not build the sandbox; why: its last stderr line
EXEC_FAILED = 127   # ... when the command itself could not be started
FORWARDED = (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGUSR1, signal.SIGUSR2)
_BOOT = ("import importlib.util as u, sys; s = u.spec_from_file_location('harness_sandbox', sys.argv[1]); "
         "m = sys.modules[s.name] = u.module_from_spec(s); s.loader.exec_module(m); "
         "m.launch(sys.argv[2], sys.argv[3:])")

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER = 0x20000, 0x4000000, 0x8000000, 0x10000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x8, 0x1000, 0x4000, 0x40000
SYS_MOUNT_SETATTR, AT_FDCWD, AT_RECURSIVE, MOUNT_ATTR_RDONLY = 442, -100, 0x8000, 0x1  # 442 on x86-64 and arm64
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT = 1, 4, 24, 38, 47
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")  # /dev inside; and /dev/nvidia*, /dev/dri with a GPU
PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs")  # as in Docker
SIOCSIFFLAGS, IFF_UP_LOOPBACK_RUNNING = 0x8914, 0x1 | 0x8 | 0x40


@dataclass(frozen=True)
class Policy:
    """What a sandboxed child may do. command() makes the paths absolute, symbolic links resolved."""
    scratch: Path                           # the one writable directory; TMPDIR is scratch/.tmp
    hidden: tuple[Path, ...] = ()           # invisible inside: an empty, unreadable file or directory over each
    writable_extra: tuple[Path, ...] = ()   # writable as well (a cache shared between children)
    gpu: bool = False                       # /dev/nvidia* and /dev/dri inside (else absent)
    network: bool = False                   # keep the machine's network (no network namespace)
    max_processes: int = 4096               # RLIMIT_NPROC; threads count (torch starts one a core, and more)
    max_file_bytes: int = 16 << 30          # RLIMIT_FSIZE (a precompiled torch/extension.h is ~0.8 GB)
    max_open_files: int = 65536             # RLIMIT_NOFILE; all three at most the caller's own hard limits
    cpu_seconds: int | None = None          # RLIMIT_CPU of each process: a backstop behind the caller's timeout
    shm_bytes: int = 8 << 30                # the size of the private tmpfs on /dev/shm
    control_fd: int | None = None           # the init serves freeze.serve on it (stops the command on request)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), default=str)

    @classmethod
    def from_json(cls, text: str) -> Policy:
        fields = json.loads(text)
        fields["scratch"] = Path(fields["scratch"])
        for name in ("hidden", "writable_extra"):
            fields[name] = tuple(Path(p) for p in fields[name])
        return cls(**fields)


class SandboxError(RuntimeError):
    """What the kernel refused while the sandbox was built (in the launcher)."""


def command(policy: Policy, argv: list[str]) -> list[str]:
    """The command line that runs `argv` in the sandbox: give it to subprocess.Popen with the env, cwd, stdio
    and start_new_session the command itself would get. Popen's pid is the launcher's, outside the sandbox:
    killing it (or its process group) kills everything inside."""
    def real(paths):
        return tuple(Path(os.path.realpath(p)) for p in paths)

    policy = dataclasses.replace(policy, scratch=real([policy.scratch])[0], hidden=real(policy.hidden),
                                 writable_extra=real(policy.writable_extra))
    return [sys.executable, "-I", "-S", "-c", _BOOT, os.path.abspath(__file__), policy.to_json(), *map(str, argv)]


@functools.lru_cache(maxsize=1)
def probe() -> str | None:
    """None where the sandbox works on this machine, else what the kernel refused (one line, for an error
    message). Runs one sandboxed no-op (tens of ms), once per process."""
    import subprocess  # here, not at the top: the launcher, which loads this file too, never needs them
    import tempfile

    if not sys.platform.startswith("linux"):
        return "the sandbox needs Linux namespaces"
    with tempfile.TemporaryDirectory(prefix="harness-sandbox-") as scratch:
        try:
            done = subprocess.run(command(Policy(Path(scratch)), [sys.executable, "-I", "-S", "-c", "pass"]),
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.SubprocessError) as exc:
            return f"the sandbox's launcher did not run: {exc}"
    if done.returncode == 0:
        return None
    lines = done.stderr.strip().splitlines()
    return lines[-1].removeprefix("harness sandbox: ") if lines else f"the launcher exited with {done.returncode}"


# ---- the launcher (a separate process, started by command()'s line) ----

def launch(policy_json: str, argv: list[str]) -> None:
    """Outside: enter the namespaces, fork the init, wait for it and exit as the command did."""
    policy = Policy.from_json(policy_json)
    try:
        _enter_namespaces(policy)
    except SandboxError as exc:
        _fail(exc)
    status_read, status_write = os.pipe()
    init = os.fork()
    if init == 0:
        os.close(status_read)
        _forked(_init, policy, argv, status_write)
    os.close(status_write)
    _forward_signals(init)
    _, status = os.waitpid(init, 0)
    reported = os.read(status_read, 4)  # the command's own status; the init's where it died before
    _exit_as(struct.unpack("i", reported)[0] if len(reported) == 4 else status)


def _init(policy: Policy, argv: list[str], status_write: int) -> None:
    """PID 1 of the new namespace: build the view, start the command, reap until it ends."""
    try:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL, what="prctl(PR_SET_PDEATHSIG)")
        if _reader_gone(status_write):  # the launcher died before PR_SET_PDEATHSIG could tell
            os._exit(SETUP_FAILED)
        _build_view(policy)
        if not policy.network:
            _loopback_up()
        _prctl(PR_SET_DUMPABLE, 0, what="prctl(PR_SET_DUMPABLE)")  # the command cannot ptrace or read its init
    except (SandboxError, OSError) as exc:
        _fail(exc)
    child = os.fork()
    if child == 0:
        _forked(_exec, policy, argv)
    _forward_signals(child)
    if policy.control_fd is not None:  # freeze.py, loaded by its path (no harness package here)
        import runpy
        import threading

        serve = runpy.run_path(str(Path(__file__).with_name("freeze.py")))["serve"]
        threading.Thread(target=serve, args=(policy.control_fd,), daemon=True).start()
    while True:
        pid, status = os.wait()
        if pid == child:
            os.write(status_write, struct.pack("i", status))
            os._exit(0)  # the kernel kills whatever is left in the namespace


def _exec(policy: Policy, argv: list[str]) -> None:
    """The command's process: limits, no privileges, then exec."""
    for sig in (*FORWARDED, signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores SIGPIPE and SIGXFSZ; exec keeps that
        signal.signal(sig, signal.SIG_DFL)
    try:
        if policy.control_fd is not None:
            os.close(policy.control_fd)  # the init's alone
        tmp = policy.scratch / ".tmp"
        tmp.mkdir(exist_ok=True)
        os.environ["TMPDIR"] = str(tmp)
        os.chdir(os.getcwd())  # the same path, now through the new mounts (else scratch stays read-only there)
        _set_limits(policy)
        _prctl(PR_SET_NO_NEW_PRIVS, 1, what="prctl(PR_SET_NO_NEW_PRIVS)")
        _drop_capabilities()
    except (SandboxError, OSError) as exc:
        _fail(exc)
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        print(f"harness sandbox: cannot run {argv[0]}: {exc.strerror}", file=sys.stderr, flush=True)
        os._exit(EXEC_FAILED)


def _enter_namespaces(policy: Policy) -> None:
    uid, gid = os.geteuid(), os.getegid()
    flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS
    if _libc().unshare(flags | (0 if policy.network else CLONE_NEWNET)) != 0:
        raise SandboxError(f"the kernel refused new user, mount, PID, IPC, UTS and network namespaces "
                           f"(unshare: {os.strerror(ctypes.get_errno())}){_userns_hint()}")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        try:
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
        except OSError as exc:
            hint = " (mapping uid 0 needs CAP_SETFCAP: in a sandbox already?)" if uid == 0 and name == "uid_map" else ""
            raise SandboxError(f"writing /proc/self/{name} in the new user namespace: {exc.strerror}{hint}") from exc


def _userns_hint() -> str:
    for path, refusing in (("/proc/sys/kernel/unprivileged_userns_clone", "0"),
                           ("/proc/sys/user/max_user_namespaces", "0"),
                           ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1")):
        try:
            if Path(path).read_text().strip() == refusing:
                return f": user namespaces are off ({path[10:].replace('/', '.')}={refusing})"
        except OSError:
            continue
    return ": user namespaces are refused (a container's seccomp profile or a security module may refuse them)"


def _build_view(policy: Policy) -> None:
    """The mount namespace's view (see the module's docstring), built in this order: what is hidden is hidden in
    the writable directories too, and all of it is read-only but what is made writable again."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE, what="making the mounts private")
    _build_dev(policy)
    _cover([str(p) for p in policy.hidden if os.path.exists(p)])
    writable = list(dict.fromkeys(str(p) for p in (policy.scratch, *policy.writable_extra)))
    for path in writable:
        _mount(path, path, None, MS_BIND | MS_REC, what=f"binding {path}")
    _mount_setattr("/", AT_RECURSIVE, set_=MOUNT_ATTR_RDONLY, what="making every mount read-only")
    for path in ("/dev/shm", *writable):
        _mount_setattr(path, 0, clear=MOUNT_ATTR_RDONLY, what=f"making {path} writable")
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
           what="mounting /proc for the new PID namespace (refused where /proc has masked parts, as in containers)")
    for path in PROC_READ_ONLY:  # sysctls check the uid alone: root inside could write the machine's
        if os.path.exists(path):
            _mount(path, path, None, MS_BIND | MS_REC, what=f"binding {path}")
            _mount_setattr(path, AT_RECURSIVE, set_=MOUNT_ATTR_RDONLY, what=f"making {path} read-only")


def _build_dev(policy: Policy) -> None:
    """A /dev of its own (a tmpfs): the harmless devices, the GPU's where policy.gpu, bound from the machine's;
    no disks, no /dev/mem, no sockets. Writing a device ignores a read-only mount: leaving them out is the way."""
    names = [*DEVICES, *(n for n in os.listdir("/dev") if policy.gpu and (n.startswith("nvidia") or n == "dri"))]
    kept = [(f"/dev/{name}", os.open(f"/dev/{name}", os.O_PATH), os.path.isdir(f"/dev/{name}")) for name in names
            if os.path.exists(f"/dev/{name}")]
    _mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "size=1m,mode=0755", what="mounting a tmpfs on /dev")
    for path, fd, is_dir in kept:  # bound from the machine's /dev, covered now, through /proc/self/fd
        if is_dir:
            os.mkdir(path)
        else:
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))
        _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC, what=f"binding {path}")
        os.close(fd)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"/dev/{name}")
    os.mkdir("/dev/shm")
    _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, f"size={policy.shm_bytes},mode=1777")


def _cover(paths: list[str]) -> None:
    """Bind an empty file (or directory), mode 000, over each path; its read-only flag comes with the rest."""
    empty_file, empty_dir = "/dev/shm/.harness-sandbox-file", "/dev/shm/.harness-sandbox-dir"
    os.close(os.open(empty_file, os.O_CREAT | os.O_WRONLY, 0))
    os.mkdir(empty_dir, 0)
    for path in paths:
        _mount(empty_dir if os.path.isdir(path) else empty_file, path, None, MS_BIND, what=f"hiding {path}")
    os.unlink(empty_file)
    os.rmdir(empty_dir)


def _loopback_up() -> None:
    """The network namespace's own loopback device, up (for code that talks to itself over 127.0.0.1)."""
    import fcntl
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", IFF_UP_LOOPBACK_RUNNING))


def _set_limits(policy: Policy) -> None:
    limits = {resource.RLIMIT_NPROC: (policy.max_processes,) * 2, resource.RLIMIT_FSIZE: (policy.max_file_bytes,) * 2,
              resource.RLIMIT_NOFILE: (policy.max_open_files,) * 2}
    if policy.cpu_seconds:
        limits[resource.RLIMIT_CPU] = (policy.cpu_seconds, policy.cpu_seconds + 5)  # SIGXCPU, then SIGKILL
    for which, (soft, top) in limits.items():
        hard = resource.getrlimit(which)[1]
        if hard != resource.RLIM_INFINITY:
            soft, top = min(soft, hard), min(top, hard)
        resource.setrlimit(which, (soft, top))


def _drop_capabilities() -> None:
    """None left, none to gain by exec (a uid 0 inside would otherwise keep them all over the namespaces)."""
    last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    for cap in range(last + 1):
        _prctl(PR_CAPBSET_DROP, cap, what="prctl(PR_CAPBSET_DROP)")
    _prctl(PR_CAP_AMBIENT, 4, what="prctl(PR_CAP_AMBIENT_CLEAR_ALL)")
    header, data = (ctypes.c_uint32 * 2)(0x20080522, 0), (ctypes.c_uint32 * 6)()  # _LINUX_CAPABILITY_VERSION_3
    if _libc().capset(header, data) != 0:
        raise SandboxError(f"capset: {os.strerror(ctypes.get_errno())}")


# ---- small pieces ----

@functools.lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return libc


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None,
           what: str = "") -> None:
    encode = lambda s: None if s is None else os.fsencode(s)  # noqa: E731
    if _libc().mount(encode(source), encode(target), encode(fstype), flags, encode(data)) != 0:
        raise SandboxError(f"{what or f'mounting {fstype} on {target}'}: {os.strerror(ctypes.get_errno())}")


def _mount_setattr(path: str, flags: int, set_: int = 0, clear: int = 0, what: str = "") -> None:
    attr = ctypes.create_string_buffer(struct.pack("QQQQ", set_, clear, 0, 0))  # struct mount_attr
    args = (ctypes.c_long(AT_FDCWD), ctypes.c_char_p(os.fsencode(path)), ctypes.c_long(flags), attr,
            ctypes.c_long(len(attr)))
    if _libc().syscall(ctypes.c_long(SYS_MOUNT_SETATTR), *args) != 0:
        err = ctypes.get_errno()
        hint = " (mount_setattr needs Linux 5.12 or later)" if err == 38 else ""  # ENOSYS
        raise SandboxError(f"{what}: {os.strerror(err)}{hint}")


def _prctl(option: int, arg: int, what: str) -> None:
    if _libc().prctl(option, arg, 0, 0, 0) != 0:
        raise SandboxError(f"{what}: {os.strerror(ctypes.get_errno())}")


def _reader_gone(fd: int) -> bool:
    import select

    poll = select.poll()
    poll.register(fd, select.POLLOUT)
    return any(events & select.POLLERR for _, events in poll.poll(0))


def _forward_signals(pid: int) -> None:
    def forward(sig: int, _frame) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)

    for sig in FORWARDED:
        signal.signal(sig, forward)


def _forked(function, *args) -> None:
    """Run `function` in a forked process and never return to the caller's code there."""
    try:
        function(*args)
    except BaseException as exc:  # noqa: BLE001 - reported, then the process ends
        _fail(f"{type(exc).__name__}: {exc}")
    os._exit(SETUP_FAILED)


def _fail(exc: BaseException | str) -> None:
    print(f"harness sandbox: {exc}", file=sys.stderr, flush=True)
    os._exit(SETUP_FAILED)


def _exit_as(status: int) -> None:
    """Exit as the command did: with its code, or killed by its signal (no core dump of the launcher)."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status))
