# Shared by the installer checks (scripts/check-deb, scripts/check-appimage): starts a program
# under a private Xvfb with a private home and waits until its window paints.
#
#   paint_check NAME SHOTS_DIR -- COMMAND...
#
# Runs COMMAND (in a D-Bus session, with HOME, XDG_*, SUZENT_HOME and TMPDIR (where an
# AppImage unpacks itself) under a new temporary folder) on a new Xvfb display, takes a screenshot each second and succeeds once one has more
# than 8 colors (a window that painted, not a flat screen); fails when COMMAND exits first or
# after 60 s. Leaves the screenshot in SHOTS_DIR/NAME.png and the program's output in
# SHOTS_DIR/NAME.log; stops the program and Xvfb either way. Prints the number of colors.
paint_check() {
  local name=$1 shots=$2
  shift 3
  local work display xvfb_pid app_pid painted=0 colors=1
  work=$(mktemp -d)
  mkdir -p "$shots" "$work/home/suzent/config" "$work/tmp"
  display=:$((90 + RANDOM % 800))
  Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
  xvfb_pid=$!
  sleep 1
  HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" XDG_DATA_HOME="$work/home/.local/share" \
    XDG_CACHE_HOME="$work/home/.cache" SUZENT_HOME="$work/home/suzent" DISPLAY="$display" \
    TMPDIR="$work/tmp" setsid dbus-run-session -- "$@" >"$shots/$name.log" 2>&1 &
  app_pid=$!
  for _ in $(seq 1 60); do
    sleep 1
    if ! kill -0 "$app_pid" 2>/dev/null; then
      echo "$name: the app exited before it painted:"; cat "$shots/$name.log"
      break
    fi
    import -display "$display" -window root "$work/shot.png" 2>/dev/null || continue
    colors=$(convert "$work/shot.png" -format '%k' info: 2>/dev/null || echo 1)
    if [ "${colors:-1}" -gt 8 ]; then painted=1; break; fi
  done
  cp "$work/shot.png" "$shots/$name.png" 2>/dev/null || true
  # The whole session (the app and its WebKit processes): setsid made it a process group.
  kill -- -"$app_pid" 2>/dev/null || true
  wait "$app_pid" 2>/dev/null || true
  kill "$xvfb_pid" 2>/dev/null || true
  wait "$xvfb_pid" 2>/dev/null || true
  rm -rf "$work"
  if [ "$painted" -ne 1 ]; then
    echo "$name: no paint within 60 s (screenshot: $shots/$name.png, log: $shots/$name.log)"
    return 1
  fi
  echo "$name: painted ($colors colors; $shots/$name.png)"
}
