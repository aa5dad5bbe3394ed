/* The run spec's parser (run-spec.h): apart from supervisor.c so that it
 * builds for the host, where tests/fuzz/fuzz-guest-spec.c fuzzes it. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "guest.h"
#include "run-spec.h"

int
spec_fail (char *error, size_t size, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (error, size, fmt, ap);
  va_end (ap);
  return -EINVAL;
}

/* Copies of the spec's strings, NUL-terminated (the TLVs are not). */
static char spec_strings[AIRLOCK_SPEC_MAX + 2 * (SPEC_MAX_ARGS + SPEC_MAX_ENV) + 16];

int
parse_spec (const uint8_t *spec, size_t len, struct run_spec *s, char *error, size_t error_size)
{
  size_t pos = 0, used = 0;
  bool have_uid = false, have_gid = false, have_timeout = false;

  memset (s, 0, sizeof *s);
  while (pos < len)
    {
      uint16_t tag, vlen;
      const uint8_t *v;
      char *str = NULL;

      if (len - pos < AIRLOCK_TLV_HEADER_SIZE)
        return spec_fail (error, error_size, "run spec: TLV header cut short at byte %zu", pos);
      tag = wire_get_le16 (spec + pos);
      vlen = wire_get_le16 (spec + pos + 2);
      v = spec + pos + AIRLOCK_TLV_HEADER_SIZE;
      if (vlen > len - pos - AIRLOCK_TLV_HEADER_SIZE)
        return spec_fail (error, error_size, "run spec: TLV %u at byte %zu runs past the end", tag, pos);
      pos += AIRLOCK_TLV_HEADER_SIZE + vlen;

      switch (tag)
        {
        case AIRLOCK_SPEC_ARG:
        case AIRLOCK_SPEC_ENV:
        case AIRLOCK_SPEC_CWD:
        case AIRLOCK_SPEC_ROOT:
        case AIRLOCK_SPEC_HOSTNAME:
        case AIRLOCK_SPEC_ROOT_DISK:
        case AIRLOCK_SPEC_USER:
        case AIRLOCK_SPEC_SHELL:
          if (memchr (v, '\0', vlen))
            return spec_fail (error, error_size, "run spec: string TLV %u holds a NUL byte", tag);
          if (used + vlen + 1 > sizeof spec_strings)
            return spec_fail (error, error_size, "run spec: strings too long");
          str = spec_strings + used;
          memcpy (str, v, vlen);
          str[vlen] = '\0';
          used += (size_t) vlen + 1;
          break;
        case AIRLOCK_SPEC_UID:
        case AIRLOCK_SPEC_GID:
        case AIRLOCK_SPEC_TIMEOUT_MS:
        case AIRLOCK_SPEC_STDIO:
        case AIRLOCK_SPEC_CONTROLS:
        case AIRLOCK_SPEC_TTY:
        case AIRLOCK_SPEC_WARP:
        case AIRLOCK_SPEC_NET_PORT:
        case AIRLOCK_SPEC_STOP_SIGNAL:
          if (vlen != 4)
            return spec_fail (error, error_size, "run spec: TLV %u is %u bytes, want 4", tag, vlen);
          break;
        case AIRLOCK_SPEC_CLOCK_NS:
          if (vlen != 8)
            return spec_fail (error, error_size, "run spec: TLV %u is %u bytes, want 8", tag, vlen);
          break;
        case AIRLOCK_SPEC_GROUPS:
          if (vlen % 4 != 0 || vlen / 4 > SPEC_MAX_GROUPS)
            return spec_fail (error, error_size, "run spec: %u bytes of groups (at most %d groups)",
                              vlen, SPEC_MAX_GROUPS);
          break;
        default:
          return spec_fail (error, error_size, "run spec: unknown TLV %u at byte %zu", tag,
                            pos - AIRLOCK_TLV_HEADER_SIZE - vlen);
        }

      switch (tag)
        {
        case AIRLOCK_SPEC_ARG:
          if (s->argc == SPEC_MAX_ARGS)
            return spec_fail (error, error_size, "run spec: more than %d arguments", SPEC_MAX_ARGS);
          s->argv[s->argc++] = str;
          break;
        case AIRLOCK_SPEC_ENV:
          if (s->envc == SPEC_MAX_ENV)
            return spec_fail (error, error_size, "run spec: more than %d environment entries",
                              SPEC_MAX_ENV);
          if (!strchr (str, '='))
            return spec_fail (error, error_size, "run spec: environment entry '%s' has no '='", str);
          s->envp[s->envc++] = str;
          break;
        case AIRLOCK_SPEC_CWD:
          s->cwd = str;
          break;
        case AIRLOCK_SPEC_ROOT:
          s->root = str;
          break;
        case AIRLOCK_SPEC_HOSTNAME:
          s->hostname = str;
          break;
        case AIRLOCK_SPEC_ROOT_DISK:
          s->root_disk = str;
          break;
        case AIRLOCK_SPEC_USER:
          s->user = str;
          break;
        case AIRLOCK_SPEC_STDIO:
          s->stdio = wire_get_le32 (v) != 0;
          break;
        case AIRLOCK_SPEC_CONTROLS:
          s->controls = wire_get_le32 (v) != 0;
          break;
        case AIRLOCK_SPEC_WARP:
          s->warp = wire_get_le32 (v) != 0;
          break;
        case AIRLOCK_SPEC_NET_PORT:
          s->net_port = wire_get_le32 (v) != 0;
          break;
        case AIRLOCK_SPEC_STOP_SIGNAL:
          if (wire_get_le32 (v) < 1 || wire_get_le32 (v) > 64)
            return spec_fail (error, error_size, "run spec: stop signal %u is not a signal (1-64)",
                              wire_get_le32 (v));
          s->stop_signal = (int) wire_get_le32 (v);
          break;
        case AIRLOCK_SPEC_UID:
          s->uid = wire_get_le32 (v);
          have_uid = true;
          break;
        case AIRLOCK_SPEC_GID:
          s->gid = wire_get_le32 (v);
          have_gid = true;
          break;
        case AIRLOCK_SPEC_TIMEOUT_MS:
          s->timeout_ms = wire_get_le32 (v);
          have_timeout = true;
          break;
        case AIRLOCK_SPEC_CLOCK_NS:
          s->clock_ns = wire_get_le64 (v);
          s->have_clock = true;
          break;
        case AIRLOCK_SPEC_TTY:
          s->tty = true;
          s->tty_rows = wire_get_le16 (v);
          s->tty_cols = wire_get_le16 (v + 2);
          break;
        case AIRLOCK_SPEC_SHELL:
          s->shell_dir = str;
          break;
        case AIRLOCK_SPEC_GROUPS:
          s->n_groups = vlen / 4;
          for (size_t i = 0; i < s->n_groups; i++)
            s->groups[i] = wire_get_le32 (v + 4 * i);
          break;
        }
    }

  (void) have_uid;
  (void) have_gid;
  if (s->argc == 0)
    return spec_fail (error, error_size, "run spec: no argv");
  if (!s->root || s->root[0] != '/')
    return spec_fail (error, error_size, "run spec: the root must be an absolute guest path");
  /* The root goes into overlayfs's option string, where these separate. */
  if (strpbrk (s->root, ",:\\"))
    return spec_fail (error, error_size, "run spec: root '%s' holds ',', ':' or '\\'", s->root);
  if (!have_timeout || s->timeout_ms == 0)
    return spec_fail (error, error_size, "run spec: no timeout");
  if (!s->cwd)
    s->cwd = "/";
  if (s->cwd[0] != '/')
    return spec_fail (error, error_size, "run spec: working directory '%s' is not absolute", s->cwd);
  if (!s->hostname)
    s->hostname = "airlock";
  if (!s->stop_signal)
    s->stop_signal = SIGTERM;
  if (s->tty && !s->stdio)
    return spec_fail (error, error_size, "run spec: a terminal (TTY) needs the stdio port (STDIO)");
  if (s->shell_dir && (s->shell_dir[0] != '/' || s->argv[0][0] != '/'))
    return spec_fail (error, error_size,
                      "run spec: a static shell needs an absolute directory and an absolute argv[0]");
  return 0;
}
