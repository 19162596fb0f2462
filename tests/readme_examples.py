#!/usr/bin/env python3
"""Runs the README's examples as printed (the blocks ```LANG example:NAME,
tools/extract_example.py) in a scratch folder holding the input files they
name, and reports TAP: one line per run, a skip when what a run needs is
missing (it says what).

usage: readme_examples.py MODE README BUILD_ROOT SCRATCH
  blocks     the README's examples are exactly the ones tested here
  tool       the tool's block, `clscale` from BUILD_ROOT/tools first on PATH
  c-build    the C program built and run against the build tree, as the
             README's commands for before installing say
  c-install  the README's install commands with DESTDIR=SCRATCH/root (a test
             does not install into the machine), the compiler and the
             program pointed at that copy
  python     the Python example, with this interpreter (PYTHONPATH from meson)
  mpi        the MPI block; as root also as the user nobody, since Open MPI
             treats root differently"""
import os
import shlex
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from extract_example import example, examples  # noqa: E402

KNOWN = ["tool", "c", "c-build", "c-install", "python", "mpi"]


class Tap:
    def __init__(self):
        self.n, self.failed = 0, 0

    def result(self, ok, name, out=""):
        self.n += 1
        for line in (out or "").rstrip().splitlines()[-40:]:
            print("# " + line)
        print(f"{'ok' if ok else 'not ok'} {self.n} - {name}")
        self.failed += not ok

    def skip(self, name, why):
        self.n += 1
        print(f"ok {self.n} - {name} # SKIP {why}")

    def end(self):
        print(f"1..{self.n}")
        return 1 if self.failed else 0


def inputs(folder):
    """The files the tool's and MPI's examples name, small and seeded."""
    import numpy as np
    rng = np.random.default_rng(42)
    survey = rng.normal(10.0, 3.0, size=(2000, 6))
    survey[::50, 2] = np.nan
    survey[1::7] = survey[0::7][: len(survey[1::7])]  # duplicate rows
    raw = rng.normal(0.0, 1.0, size=(3, 500, 20))
    raw[:, ::37, 4] = -9999.0                            # the sentinel
    raw[:, 5, 7] = 80.0                                  # outliers
    files = {
        "survey.npy": survey,
        "raw.npy": raw,
        "train.npy": rng.uniform(-5, 5, size=(1000, 10)).astype(np.float32),
        "test.npy": rng.uniform(-6, 6, size=(400, 10)).astype(np.float32),
        "big.npy": rng.standard_t(3, size=(4, 300, 50)),
        "discount.npy": rng.uniform(0.5, 1.0, size=(10, 400, 5)),
        "multBy.npy": rng.uniform(0.9, 1.1, size=(400, 5)),
        "in.npy": rng.normal(100.0, 20.0, size=(4, 200, 30)),
    }
    for name, data in files.items():
        np.save(os.path.join(folder, name), data)


def run_sh(text, cwd, env, user=None):
    cmd = ["sh", "-e", "-x", "-c", text]
    if user:
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user_group(user)}", "--clear-groups", "--"] + cmd
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, timeout=600)
    return p.returncode == 0, p.stdout


def user_group(user):
    import grp
    import pwd
    return grp.getgrgid(pwd.getpwnam(user).pw_gid).gr_name


def fresh(path, mode=0o755):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    os.chmod(path, mode)
    return path


def main():
    mode, readme, build, scratch = sys.argv[1:5]
    build = os.path.abspath(build)
    tap = Tap()
    env = dict(os.environ)
    # the example must work without these: Open MPI as root is the README's business
    for k in ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"):
        env.pop(k, None)

    if mode == "blocks":
        got = sorted(examples(readme))
        tap.result(got == sorted(KNOWN), "the README's examples are the tested ones",
                   f"README: {got}\ntested: {sorted(KNOWN)}")
        return tap.end()

    fresh(scratch)
    tool_dir = os.path.join(build, "tools")
    env["PATH"] = tool_dir + os.pathsep + env.get("PATH", "")
    env["TMPDIR"] = scratch

    if mode == "tool":
        inputs(scratch)
        ok, out = run_sh(example(readme, "tool"), scratch, env)
        tap.result(ok, "the tool's examples", out)
    elif mode in ("c-build", "c-install"):
        with open(os.path.join(scratch, "example.c"), "w") as f:
            f.write(example(readme, "c"))
        os.symlink(build, os.path.join(scratch, "build"))
        if mode == "c-install":
            root = os.path.join(scratch, "root")
            env["DESTDIR"] = root
            # what the install would give: pkg-config and the loader find the copy
            prefix = subprocess.run(["meson", "introspect", "--buildoptions", build], stdout=subprocess.PIPE,
                                    universal_newlines=True, check=True).stdout
            import json
            opts = {o["name"]: o["value"] for o in json.loads(prefix)}
            installed = json.loads(subprocess.run(["meson", "introspect", "--installed", build],
                                                  stdout=subprocess.PIPE, universal_newlines=True,
                                                  check=True).stdout).values()
            libdir = os.path.join(opts["prefix"], opts["libdir"])
            env["PKG_CONFIG_PATH"] = root + os.path.join(libdir, "pkgconfig")
            env["PKG_CONFIG_SYSROOT_DIR"] = root
            env["LD_LIBRARY_PATH"] = root + libdir
        ok, out = run_sh(example(readme, mode), scratch, env)
        tap.result(ok, f"the C example, {'installed' if mode == 'c-install' else 'from the build tree'}", out)
        if mode == "c-install":
            # the Python package went where Debian's python3 searches (not under DESTDIR)
            look = subprocess.run(["/usr/bin/python3", "-c", "import sys; print(chr(10).join(sys.path))"],
                                   stdout=subprocess.PIPE, universal_newlines=True).stdout.split()
            pkg = [d for d in installed if d.endswith("/clscale/__init__.py")]
            where = os.path.dirname(os.path.dirname(pkg[0])) if pkg else None
            if where is None:
                tap.skip("the Python package installs where python3 looks", "this build has no Python package")
            else:
                tap.result(where in look, "the Python package installs where python3 looks",
                           f"installed in {where}; python3 searches {look}")
    elif mode == "python":
        path = os.path.join(scratch, "example.py")
        with open(path, "w") as f:
            f.write(example(readme, "python"))
        p = subprocess.run([sys.executable, path], cwd=scratch, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True, timeout=600)
        tap.result(p.returncode == 0, "the Python example", p.stdout)
    elif mode == "mpi":
        text = example(readme, "mpi")
        if not shutil.which("mpirun"):
            tap.skip("the MPI example", "mpirun is not installed (openmpi-bin)")
            return tap.end()
        as_root = os.getuid() == 0
        inputs(scratch)
        ok, out = run_sh(text, scratch, env)
        tap.result(ok, "the MPI example as " + ("root" if as_root else "this user"), out)
        if as_root:
            other = fresh(os.path.join(scratch, "nobody"), 0o777)
            inputs(other)
            for f in os.listdir(other):
                os.chmod(os.path.join(other, f), 0o666)
            uenv = dict(env, HOME=other, TMPDIR=other,
                        CLSCALE_CACHE_DIR=os.path.join(other, "kcache"),
                        POCL_CACHE_DIR=os.path.join(other, "pocl-cache"))
            try:
                user_group("nobody")
                why = None if shutil.which("setpriv") else "no setpriv (util-linux)"
            except KeyError:
                why = "no user nobody"
            if why is None and not run_sh("test -x " + shlex.quote(os.path.join(tool_dir, "clscale")), other, uenv, user="nobody")[0]:
                why = "the user nobody cannot reach " + tool_dir
            if why:
                tap.skip("the MPI example as the user nobody", why)
            else:
                ok, out = run_sh(text, other, uenv, user="nobody")
                tap.result(ok, "the MPI example as the user nobody", out)
    else:
        sys.exit(f"unknown mode {mode}")
    return tap.end()


if __name__ == "__main__":
    sys.exit(main())
