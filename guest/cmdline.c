/* The kernel command line: what the host asked for (airlock.run_ms=, the
 * airlock.test= mode and its value), read into a struct boot_config whose
 * errors main() reports once the host can hear them. */
#define _GNU_SOURCE

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "init.h"

#define RUN_MS_DEFAULT 1000

static const struct {
  const char *name;
  enum test_mode mode;
} test_mode_names[] = {
  { "wrong-nonce", TEST_WRONG_NONCE },
  { "seq-gap", TEST_SEQ_GAP },
  { "oversize", TEST_OVERSIZE },
  { "unknown-type", TEST_UNKNOWN_TYPE },
  { "no-heartbeat", TEST_NO_HEARTBEAT },
  { "no-trailer", TEST_NO_TRAILER },
  { "panic", TEST_PANIC },
  { "panic-mid-run", TEST_PANIC_MID_RUN },
  { "garbage", TEST_GARBAGE },
  { "replay-frame", TEST_REPLAY_FRAME },
  { "unsupervised", TEST_UNSUPERVISED },
  { "hooks-ring-min", TEST_HOOKS_RING_MIN },
  { "hooks-ring-stall", TEST_HOOKS_RING_STALL },
  { "hooks-off", TEST_HOOKS_OFF },
};

/* ---- the kernel command line ------------------------------------------ */

/* Parses a decimal u32 with nothing around it. */
static int
parse_u32 (const char *s, uint32_t *ret)
{
  uint64_t v = 0;

  if (*s == '\0')
    return -EINVAL;
  for (; *s; s++)
    {
      if (*s < '0' || *s > '9')
        return -EINVAL;
      v = v * 10 + (uint64_t) (*s - '0');
      if (v > UINT32_MAX)
        return -ERANGE;
    }
  *ret = (uint32_t) v;
  return 0;
}

/* Decodes exactly 2 * @len hex digits (either case) into @ret. */
static int
parse_hex (const char *s, uint8_t *ret, size_t len)
{
  if (strlen (s) != 2 * len)
    return -EINVAL;
  for (size_t i = 0; i < 2 * len; i++)
    {
      char c = s[i];
      int v = c >= '0' && c <= '9' ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

      if (v < 0)
        return -EINVAL;
      if (i % 2 == 0)
        ret[i / 2] = (uint8_t) (v << 4);
      else
        ret[i / 2] |= (uint8_t) v;
    }
  return 0;
}

/* Fills @cfg from /proc/cmdline.  Never fails: a problem is stored in
 * cfg->error for main() to report once the host can hear it. */
void
read_boot_config (struct boot_config *cfg)
{
  static char cmdline[4096];
  char *save = NULL;
  ssize_t n;

  memset (cfg, 0, sizeof *cfg);
  cfg->run_ms = RUN_MS_DEFAULT;
  cfg->test = TEST_NONE;

  n = read_file ("/proc/cmdline", cmdline, sizeof cmdline);
  if (n < 0)
    {
      snprintf (cfg->error, sizeof cfg->error, "cannot read '/proc/cmdline': %s",
                strerror ((int) -n));
      return;
    }

  /* Whitespace-separated words; the keys we read never need quoting.  Later
   * words win, as the kernel's own parameters do. */
  for (char *word = strtok_r (cmdline, " \t\n", &save); word;
       word = strtok_r (NULL, " \t\n", &save))
    {
      if (strncmp (word, AIRLOCK_CMDLINE_RUN_MS, strlen (AIRLOCK_CMDLINE_RUN_MS)) == 0)
        {
          const char *value = word + strlen (AIRLOCK_CMDLINE_RUN_MS);

          if (parse_u32 (value, &cfg->run_ms) < 0)
            snprintf (cfg->error, sizeof cfg->error,
                      "invalid '%s%.32s': not a number of milliseconds",
                      AIRLOCK_CMDLINE_RUN_MS, value);
        }
      else if (strncmp (word, AIRLOCK_CMDLINE_TEST, strlen (AIRLOCK_CMDLINE_TEST)) == 0)
        {
          const char *value = word + strlen (AIRLOCK_CMDLINE_TEST);

          snprintf (cfg->test_name, sizeof cfg->test_name, "%s", value);
          cfg->test = TEST_UNKNOWN;
          for (size_t i = 0; i < sizeof test_mode_names / sizeof test_mode_names[0]; i++)
            if (strcmp (value, test_mode_names[i].name) == 0)
              cfg->test = test_mode_names[i].mode;
          if (strncmp (value, "skip-control=", strlen ("skip-control=")) == 0)
            {
              cfg->test = TEST_SKIP_CONTROL;
              snprintf (cfg->test_arg, sizeof cfg->test_arg, "%s", value + strlen ("skip-control="));
            }
          if (strncmp (value, "stale-nonce=", strlen ("stale-nonce=")) == 0)
            {
              snprintf (cfg->test_arg, sizeof cfg->test_arg, "%s", value + strlen ("stale-nonce="));
              if (parse_hex (cfg->test_arg, cfg->stale_nonce, sizeof cfg->stale_nonce) == 0)
                cfg->test = TEST_STALE_NONCE;
              else
                snprintf (cfg->error, sizeof cfg->error,
                          "invalid '%sstale-nonce=%.70s': not %d hex digits", AIRLOCK_CMDLINE_TEST,
                          cfg->test_arg, 2 * AIRLOCK_NONCE_LEN);
            }
        }
    }
}

