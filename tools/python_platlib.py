#!/usr/bin/env python3
"""Build-time tool: prints the folder under PREFIX that this interpreter
searches for packages (python/clscale/meson.build installs there).
Debian's python3 has its own schemes: posix_local (/usr/local/lib/python3.X/
dist-packages, on its path) and deb_system (/usr/lib/python3/dist-packages);
elsewhere the standard posix_prefix under PREFIX."""
import sys
import sysconfig

prefix = sys.argv[1].rstrip("/")
schemes = sysconfig.get_scheme_names()
if prefix == "/usr/local" and "posix_local" in schemes:
    print(sysconfig.get_path("platlib", "posix_local"))
elif prefix == "/usr" and "deb_system" in schemes:
    print(sysconfig.get_path("platlib", "deb_system"))
else:
    print(sysconfig.get_path("platlib", "posix_prefix", vars={"base": prefix, "platbase": prefix}))
