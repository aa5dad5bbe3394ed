/* libFuzzer harness for the supervisor's parser of the run spec
 * (guest/run-spec.c, parse_spec), built for the host.
 *
 * The spec comes from the host, which is trusted, but it is the first
 * thing the guest's PID 1 parses, and a parser that a malformed spec can
 * crash would take the run down with no reason given.  The input is the
 * spec's bytes.  Besides the sanitizers' findings, the harness aborts when:
 *
 *   - on failure: the reason is empty or not NUL-terminated in its buffer;
 *   - on success: the spec breaks what the supervisor relies on: argv has
 *     1..SPEC_MAX_ARGS entries and ends with NULL, envp has at most
 *     SPEC_MAX_ENV entries, each with '=', and ends with NULL; the root is
 *     absolute without ',', ':' or '\'; the working directory is absolute;
 *     a hostname is set; the timeout is not 0; a terminal comes with stdio;
 *     at most SPEC_MAX_GROUPS groups; a static shell comes with absolute
 *     paths; and argv, envp and the last of each single string are the
 *     input's TLVs, in order (an independent walk of the TLVs);
 *   - the host's encoder (lib/evidence/spec.c) disagrees with the guest's
 *     parser: a spec the guest parsed, when the host can encode it, parses
 *     again to the same values. */
#include "config.h"

#include "evidence/spec.h"

#include "protocol.h"
#include "run-spec.h"
#include "wire.h"

#include "fuzz-util.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* What parse_spec returned, copied out of its static string buffer (the
 * next call reuses it). */
typedef struct {
  GPtrArray *argv, *envp;
  char *cwd, *root, *hostname, *root_disk, *user, *shell_dir;
  struct run_spec s;
} Parsed;

static void
parsed_clear (Parsed *p)
{
  g_clear_pointer (&p->argv, g_ptr_array_unref);
  g_clear_pointer (&p->envp, g_ptr_array_unref);
  g_clear_pointer (&p->cwd, g_free);
  g_clear_pointer (&p->root, g_free);
  g_clear_pointer (&p->hostname, g_free);
  g_clear_pointer (&p->root_disk, g_free);
  g_clear_pointer (&p->user, g_free);
  g_clear_pointer (&p->shell_dir, g_free);
}

static void
parsed_take (Parsed *p, const struct run_spec *s)
{
  p->s = *s;
  p->argv = g_ptr_array_new_with_free_func (g_free);
  for (size_t i = 0; i < s->argc; i++)
    g_ptr_array_add (p->argv, g_strdup (s->argv[i]));
  g_ptr_array_add (p->argv, NULL);
  p->envp = g_ptr_array_new_with_free_func (g_free);
  for (size_t i = 0; i < s->envc; i++)
    g_ptr_array_add (p->envp, g_strdup (s->envp[i]));
  g_ptr_array_add (p->envp, NULL);
  p->cwd = g_strdup (s->cwd);
  p->root = g_strdup (s->root);
  p->hostname = g_strdup (s->hostname);
  p->root_disk = g_strdup (s->root_disk);
  p->user = g_strdup (s->user);
  p->shell_dir = g_strdup (s->shell_dir);
}

static void
check_error (const char *error, size_t size)
{
  fuzz_check (memchr (error, '\0', size) != NULL);
  fuzz_check (error[0] != '\0');
}

/* The last string TLV with @tag, as a NUL-terminated copy, or NULL. */
static char *
last_string (const uint8_t *data, size_t size, uint16_t tag)
{
  char *found = NULL;

  for (size_t pos = 0; pos + 4 <= size;)
    {
      uint16_t t = wire_get_le16 (data + pos), len = wire_get_le16 (data + pos + 2);

      if (t == tag)
        {
          g_free (found);
          found = g_strndup ((const char *) data + pos + 4, len);
        }
      pos += 4 + (size_t) len;
    }
  return found;
}

static void
check_strings_are_the_input (const Parsed *p, const uint8_t *data, size_t size)
{
  size_t n_arg = 0, n_env = 0;
  static const struct {
    uint16_t tag;
    size_t offset;
  } singles[] = {
    { AIRLOCK_SPEC_ROOT, G_STRUCT_OFFSET (Parsed, root) },
    { AIRLOCK_SPEC_ROOT_DISK, G_STRUCT_OFFSET (Parsed, root_disk) },
    { AIRLOCK_SPEC_USER, G_STRUCT_OFFSET (Parsed, user) },
    { AIRLOCK_SPEC_SHELL, G_STRUCT_OFFSET (Parsed, shell_dir) },
  };

  for (size_t pos = 0; pos + 4 <= size;)
    {
      uint16_t tag = wire_get_le16 (data + pos), len = wire_get_le16 (data + pos + 2);
      const char *v = (const char *) data + pos + 4;

      fuzz_check (pos + 4 + len <= size);   /* it parsed: every TLV is whole */
      if (tag == AIRLOCK_SPEC_ARG)
        {
          const char *arg = g_ptr_array_index (p->argv, n_arg);

          fuzz_check (strlen (arg) == len && memcmp (arg, v, len) == 0);
          n_arg++;
        }
      else if (tag == AIRLOCK_SPEC_ENV)
        {
          const char *env = g_ptr_array_index (p->envp, n_env);

          fuzz_check (strlen (env) == len && memcmp (env, v, len) == 0);
          n_env++;
        }
      pos += 4 + (size_t) len;
    }
  fuzz_check (n_arg == p->s.argc);
  fuzz_check (n_env == p->s.envc);

  for (size_t i = 0; i < G_N_ELEMENTS (singles); i++)
    {
      g_autofree char *want = last_string (data, size, singles[i].tag);
      const char *got = G_STRUCT_MEMBER (const char *, p, singles[i].offset);

      fuzz_check ((want == NULL) == (got == NULL));
      fuzz_check (!want || strcmp (want, got) == 0);
    }
  {
    g_autofree char *cwd = last_string (data, size, AIRLOCK_SPEC_CWD);
    g_autofree char *hostname = last_string (data, size, AIRLOCK_SPEC_HOSTNAME);

    fuzz_check (strcmp (p->cwd, cwd ? cwd : "/") == 0);
    fuzz_check (strcmp (p->hostname, hostname ? hostname : "airlock") == 0);
  }
}

static void
check_invariants (const struct run_spec *s)
{
  fuzz_check (s->argc >= 1 && s->argc <= SPEC_MAX_ARGS);
  fuzz_check (s->argv[s->argc] == NULL);
  fuzz_check (s->envc <= SPEC_MAX_ENV);
  fuzz_check (s->envp[s->envc] == NULL);
  for (size_t i = 0; i < s->envc; i++)
    fuzz_check (strchr (s->envp[i], '=') != NULL);
  fuzz_check (s->root && s->root[0] == '/' && !strpbrk (s->root, ",:\\"));
  fuzz_check (s->cwd && s->cwd[0] == '/');
  fuzz_check (s->hostname != NULL);
  fuzz_check (s->timeout_ms != 0);
  fuzz_check (!s->tty || s->stdio);
  fuzz_check (s->n_groups <= SPEC_MAX_GROUPS);
  fuzz_check (!s->shell_dir || (s->shell_dir[0] == '/' && s->argv[0][0] == '/'));
}

static gboolean
str_equal0 (const char *a, const char *b)
{
  return g_strcmp0 (a, b) == 0;
}

/* The host encodes what the guest parsed; the guest parses it again. */
static void
check_host_round_trip (const Parsed *p)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) bytes = NULL;
  guint32 groups[SPEC_MAX_GROUPS];
  AirlockRunSpec spec = {
    .argv = (const char *const *) p->argv->pdata,
    .envp = (const char *const *) p->envp->pdata,
    .cwd = p->cwd,
    .uid = p->s.uid,
    .gid = p->s.gid,
    .groups = groups,
    .n_groups = p->s.n_groups,
    .root = p->root,
    .timeout_ms = p->s.timeout_ms,
    .hostname = p->hostname,
    .root_disk = p->root_disk,
    .user = p->user,
    .stdio = p->s.stdio,
    .controls = p->s.controls,
    .clock_ns = p->s.have_clock ? p->s.clock_ns : 0,
    .tty = p->s.tty,
    .tty_rows = p->s.tty_rows,
    .tty_cols = p->s.tty_cols,
    .shell_dir = p->shell_dir,
    .warp = p->s.warp,
  };
  struct run_spec again;
  char reason[256];
  Parsed q = { 0 };

  for (size_t i = 0; i < p->s.n_groups; i++)
    groups[i] = p->s.groups[i];
  bytes = airlock_run_spec_encode (&spec, &error);
  if (!bytes)
    return;   /* the host is stricter (an empty argv[0] or NAME): it never sends these */

  if (parse_spec (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes), &again, reason,
                  sizeof reason) != 0)
    {
      fprintf (stderr, "the guest refuses what the host encoded: %s\n", reason);
      fuzz_check (!"the host's spec parses in the guest");
    }
  parsed_take (&q, &again);
  fuzz_check (q.s.argc == p->s.argc && q.s.envc == p->s.envc);
  for (size_t i = 0; i < p->s.argc; i++)
    fuzz_check (strcmp (g_ptr_array_index (q.argv, i), g_ptr_array_index (p->argv, i)) == 0);
  for (size_t i = 0; i < p->s.envc; i++)
    fuzz_check (strcmp (g_ptr_array_index (q.envp, i), g_ptr_array_index (p->envp, i)) == 0);
  fuzz_check (str_equal0 (q.cwd, p->cwd) && str_equal0 (q.root, p->root)
              && str_equal0 (q.hostname, p->hostname) && str_equal0 (q.root_disk, p->root_disk)
              && str_equal0 (q.user, p->user) && str_equal0 (q.shell_dir, p->shell_dir));
  fuzz_check (q.s.uid == p->s.uid && q.s.gid == p->s.gid);
  fuzz_check (q.s.n_groups == p->s.n_groups);
  fuzz_check (memcmp (q.s.groups, p->s.groups, p->s.n_groups * sizeof p->s.groups[0]) == 0);
  fuzz_check (q.s.timeout_ms == p->s.timeout_ms);
  fuzz_check (q.s.stdio == p->s.stdio && q.s.controls == p->s.controls);
  fuzz_check (q.s.warp == p->s.warp);
  fuzz_check ((q.s.have_clock ? q.s.clock_ns : 0) == (p->s.have_clock ? p->s.clock_ns : 0));
  fuzz_check (q.s.tty == p->s.tty);
  if (p->s.tty)
    fuzz_check (q.s.tty_rows == p->s.tty_rows && q.s.tty_cols == p->s.tty_cols);
  parsed_clear (&q);
}

FUZZ_DEFINE_INITIALIZE_GLIB_WARNINGS_ABORT ()

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  /* parse_spec keeps a struct run_spec (about 16 KiB) in its caller:
   * static here, as in the supervisor, so a large input is not a stack
   * finding of the harness's own making. */
  static struct run_spec s;
  char reason[256];
  /* An exact-size copy: ASan sees a read past the input's end. */
  g_autofree uint8_t *copy = g_memdup2 (data, size);
  Parsed p = { 0 };

  memset (reason, 0x5a, sizeof reason);
  if (parse_spec (copy, size, &s, reason, sizeof reason) != 0)
    {
      check_error (reason, sizeof reason);
      return 0;
    }
  check_invariants (&s);
  parsed_take (&p, &s);
  check_strings_are_the_input (&p, data, size);
  check_host_round_trip (&p);
  parsed_clear (&p);
  return 0;
}
