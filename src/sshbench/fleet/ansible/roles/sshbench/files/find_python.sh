# sshbench fleet: find a Python on this host that runs, by running it (no Python needed to run this:
# the role sends it with the raw module, before any module runs). Ansible's interpreter discovery only
# looks a name up: it takes the first python3.13 on PATH, which may be a pyenv shim of a version that is
# installed but not selected and exits 127 ("pyenv: python3.13: command not found").
#
# Arguments: $1 the host's sshbench_python (empty: none), $2 the inventory's ansible_python_interpreter
# (empty: none), $3 the wheelhouse's tag ("python 3.11 x86_64"; empty: any Python fits).
# Candidates in order: $1, $2, /usr/bin/python3, python3 on PATH, then every python3.X on PATH, newest
# first. Each must run, print its version, be 3.11 or newer (sshbench's venv) and have the venv module.
# The first that also fits the wheelhouse is taken (else the first that works, and the check says why it
# does not fit). Prints "python=PATH" (its sys.executable: not a shim, whose choice can change with the
# directory) and "tag=python X.Y MACHINE", after "passed over: ..." when earlier candidates failed.
# None works: exit 3 and one line "no python: ..." naming each candidate tried and what it did.
explicit=$1
inventory=$2
want=$3
tried=""
seen=":"
chosen=""
chosen_tag=""
limit=""
if command -v timeout >/dev/null 2>&1; then limit="timeout 30"; fi

note() { tried="${tried:+$tried; }$1"; }

# probe LABEL COMMAND: 0 when COMMAND is a Python that fits the wheelhouse (chosen), else 1
probe() {
  label=$1
  path=$(command -v "$2" 2>/dev/null) || { note "$label: not found"; return 1; }
  case "$label" in *"$path") shown=$label ;; *) shown="$label ($path)" ;; esac
  case "$seen" in *":$path:"*) return 1 ;; esac
  seen="$seen$path:"
  out=$($limit "$path" -c 'import platform, sys
print(sys.executable)
print("python %d.%d %s" % (sys.version_info[0], sys.version_info[1], platform.machine()))' 2>&1 </dev/null)
  rc=$?
  if [ "$rc" -ne 0 ]; then
    note "$shown: exit $rc: $(printf '%s\n' "$out" | sed -n '/./{p;q;}')"
    return 1
  fi
  exe=$(printf '%s\n' "$out" | sed -n 1p)
  tag=$(printf '%s\n' "$out" | sed -n 2p)
  [ -n "$exe" ] || exe=$path
  version=${tag#python }
  version=${version%% *}
  major=${version%%.*}
  minor=${version#*.}
  case "$major.$minor" in
    *[!0-9.]* | .* | *.) note "$shown: printed no version ($(printf '%s' "$out" | head -c 60))"; return 1 ;;
  esac
  if [ "$major" -ne 3 ] || [ "$minor" -lt 11 ]; then
    note "$shown: Python $version is too old (sshbench needs 3.11 or newer)"
    return 1
  fi
  if ! $limit "$path" -c 'import venv' </dev/null >/dev/null 2>&1; then
    note "$shown: Python $version has no venv module (apt-get install python3-venv)"
    return 1
  fi
  if [ -z "$want" ] || [ "$tag" = "$want" ]; then
    chosen=$exe
    chosen_tag=$tag
    return 0
  fi
  note "$shown: $tag, not the wheelhouse's $want"
  if [ -z "$chosen" ]; then chosen=$exe; chosen_tag=$tag; fi
  return 1
}

found() {  # the chosen one last: sshbench's progress callback keeps the end of a long output
  if [ -n "$tried" ]; then echo "passed over: $tried"; fi
  echo "python=$chosen"
  echo "tag=$chosen_tag"
  exit 0
}

if [ -n "$explicit" ]; then probe "sshbench_python $explicit" "$explicit" && found; fi
if [ -n "$inventory" ]; then probe "ansible_python_interpreter $inventory" "$inventory" && found; fi
probe /usr/bin/python3 /usr/bin/python3 && found
probe python3 python3 && found
# every python3.X on PATH, newest first (each copy on PATH, in PATH's order)
dirs=$(printf '%s\n' "$PATH" | tr ':' '\n')
minors=$(printf '%s\n' "$dirs" | while IFS= read -r dir; do
  for f in "$dir"/python3.*; do
    minor=${f##*/python3.}
    case "$minor" in '' | *[!0-9]*) ;; *) [ -x "$f" ] && echo "$minor" ;; esac
  done
done | sort -rn | uniq)
for minor in $minors; do
  while IFS= read -r dir; do
    [ -n "$dir" ] && [ -x "$dir/python3.$minor" ] || continue
    probe "python3.$minor" "$dir/python3.$minor" && found
  done <<EOF
$dirs
EOF
done
if [ -n "$chosen" ]; then found; fi
echo "no python: nothing here runs Python 3.11 or newer with venv (set sshbench_python to one that does): ${tried:-no python3 on PATH}"
exit 3
