/* The run spec encoder (see spec.h and guest/protocol.h). */
#include "config.h"

#include "spec.h"

#include "protocol.h"
#include "wire.h"

#include <string.h>

G_DEFINE_QUARK (airlock-run-spec-error-quark, airlock_run_spec_error)

/* The largest value one TLV can carry: its length is a u16. */
#define TLV_VALUE_MAX 0xffff

static void
put_tlv (GByteArray *out, guint16 tag, const void *value, gsize len)
{
  guint8 header[AIRLOCK_TLV_HEADER_SIZE];

  g_assert (len <= TLV_VALUE_MAX);
  wire_le16 (header, tag);
  wire_le16 (header + 2, (guint16) len);
  g_byte_array_append (out, header, sizeof header);
  if (len > 0)
    g_byte_array_append (out, value, (guint) len);
}

static void
put_u32 (GByteArray *out, guint16 tag, guint32 value)
{
  guint8 bytes[4];

  wire_le32 (bytes, value);
  put_tlv (out, tag, bytes, sizeof bytes);
}

/* A C string cannot hold a NUL, so the bound is the only check left: the
 * guest reads each value as exactly its TLV's bytes. */
static gboolean
check_string (const char *field, const char *value, GError **error)
{
  gsize len = strlen (value);

  if (len > TLV_VALUE_MAX)
    {
      g_set_error (error, AIRLOCK_RUN_SPEC_ERROR, AIRLOCK_RUN_SPEC_ERROR_TOO_LARGE,
                   "run spec field %s is %" G_GSIZE_FORMAT " bytes long, at most %d fit in "
                   "one TLV", field, len, TLV_VALUE_MAX);
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_absolute (const char *field, const char *value, GError **error)
{
  if (value[0] != '/')
    {
      g_set_error (error, AIRLOCK_RUN_SPEC_ERROR, AIRLOCK_RUN_SPEC_ERROR_INVALID,
                   "run spec field %s '%s' is not an absolute guest path", field, value);
      return FALSE;
    }
  return check_string (field, value, error);
}

GBytes *
airlock_run_spec_encode (const AirlockRunSpec *spec, GError **error)
{
  g_autoptr (GByteArray) out = NULL;

  g_return_val_if_fail (spec != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  g_return_val_if_fail (spec->groups != NULL || spec->n_groups == 0, NULL);

  if (spec->argv == NULL || spec->argv[0] == NULL)
    {
      g_set_error (error, AIRLOCK_RUN_SPEC_ERROR, AIRLOCK_RUN_SPEC_ERROR_INVALID,
                   "run spec field argv is empty: it needs at least the program");
      return NULL;
    }
  if (spec->argv[0][0] == '\0')
    {
      g_set_error (error, AIRLOCK_RUN_SPEC_ERROR, AIRLOCK_RUN_SPEC_ERROR_INVALID,
                   "run spec field argv[0] is empty: it must name the program");
      return NULL;
    }
  if (spec->root == NULL)
    {
      g_set_error (error, AIRLOCK_RUN_SPEC_ERROR, AIRLOCK_RUN_SPEC_ERROR_INVALID,
                   "run spec field root is not set: the guest needs the workload's root");
      return NULL;
    }
  if (spec->timeout_ms == 0)
    {
      g_set_error (error, AIRLOCK_RUN_SPEC_ERROR, AIRLOCK_RUN_SPEC_ERROR_INVALID,
                   "run spec field timeout_ms is 0: a run needs a time limit");
      return NULL;
    }

  for (gsize i = 0; spec->argv[i] != NULL; i++)
    {
      g_autofree char *field = g_strdup_printf ("argv[%" G_GSIZE_FORMAT "]", i);

      if (!check_string (field, spec->argv[i], error))
        return NULL;
    }
  for (gsize i = 0; spec->envp != NULL && spec->envp[i] != NULL; i++)
    {
      g_autofree char *field = g_strdup_printf ("envp[%" G_GSIZE_FORMAT "]", i);
      const char *eq = strchr (spec->envp[i], '=');

      /* execve() would pass anything, but a NAME=VALUE list is what every
       * program reading its environment assumes. */
      if (eq == NULL || eq == spec->envp[i])
        {
          g_set_error (error, AIRLOCK_RUN_SPEC_ERROR, AIRLOCK_RUN_SPEC_ERROR_INVALID,
                       "run spec field %s '%s' is not NAME=VALUE", field, spec->envp[i]);
          return NULL;
        }
      if (!check_string (field, spec->envp[i], error))
        return NULL;
    }
  if (spec->cwd != NULL && !check_absolute ("cwd", spec->cwd, error))
    return NULL;
  if (!check_absolute ("root", spec->root, error))
    return NULL;
  if (spec->stop_signal < 0 || spec->stop_signal > 64)
    {
      g_set_error (error, AIRLOCK_RUN_SPEC_ERROR, AIRLOCK_RUN_SPEC_ERROR_INVALID,
                   "run spec field stop_signal %d is not a signal (1-64)", spec->stop_signal);
      return NULL;
    }
  if (spec->hostname != NULL && !check_string ("hostname", spec->hostname, error))
    return NULL;
  if (spec->root_disk != NULL && !check_string ("root_disk", spec->root_disk, error))
    return NULL;
  if (spec->user != NULL && !check_string ("user", spec->user, error))
    return NULL;
  if (spec->tty && !spec->stdio)
    {
      g_set_error (error, AIRLOCK_RUN_SPEC_ERROR, AIRLOCK_RUN_SPEC_ERROR_INVALID,
                   "run spec field tty needs stdio: the terminal is on the stdio port");
      return NULL;
    }
  if (spec->shell_dir != NULL)
    {
      if (!check_absolute ("shell_dir", spec->shell_dir, error))
        return NULL;
      if (spec->argv[0][0] != '/')
        {
          g_set_error (error, AIRLOCK_RUN_SPEC_ERROR, AIRLOCK_RUN_SPEC_ERROR_INVALID,
                       "run spec field argv[0] '%s' is not absolute: with shell_dir the guest "
                       "looks for it in the workload's root", spec->argv[0]);
          return NULL;
        }
    }
  if (spec->n_groups > TLV_VALUE_MAX / 4)
    {
      g_set_error (error, AIRLOCK_RUN_SPEC_ERROR, AIRLOCK_RUN_SPEC_ERROR_TOO_LARGE,
                   "run spec field groups has %" G_GSIZE_FORMAT " entries, at most %d fit "
                   "in one TLV", spec->n_groups, TLV_VALUE_MAX / 4);
      return NULL;
    }

  out = g_byte_array_new ();
  for (gsize i = 0; spec->argv[i] != NULL; i++)
    put_tlv (out, AIRLOCK_SPEC_ARG, spec->argv[i], strlen (spec->argv[i]));
  for (gsize i = 0; spec->envp != NULL && spec->envp[i] != NULL; i++)
    put_tlv (out, AIRLOCK_SPEC_ENV, spec->envp[i], strlen (spec->envp[i]));
  if (spec->cwd != NULL)
    put_tlv (out, AIRLOCK_SPEC_CWD, spec->cwd, strlen (spec->cwd));
  put_u32 (out, AIRLOCK_SPEC_UID, spec->uid);
  put_u32 (out, AIRLOCK_SPEC_GID, spec->gid);
  if (spec->n_groups > 0)
    {
      g_autofree guint8 *groups = g_malloc (spec->n_groups * 4);

      for (gsize i = 0; i < spec->n_groups; i++)
        wire_le32 (groups + 4 * i, spec->groups[i]);
      put_tlv (out, AIRLOCK_SPEC_GROUPS, groups, spec->n_groups * 4);
    }
  put_tlv (out, AIRLOCK_SPEC_ROOT, spec->root, strlen (spec->root));
  put_u32 (out, AIRLOCK_SPEC_TIMEOUT_MS, spec->timeout_ms);
  if (spec->hostname != NULL)
    put_tlv (out, AIRLOCK_SPEC_HOSTNAME, spec->hostname, strlen (spec->hostname));
  if (spec->root_disk != NULL)
    put_tlv (out, AIRLOCK_SPEC_ROOT_DISK, spec->root_disk, strlen (spec->root_disk));
  if (spec->user != NULL)
    put_tlv (out, AIRLOCK_SPEC_USER, spec->user, strlen (spec->user));
  if (spec->stdio)
    put_u32 (out, AIRLOCK_SPEC_STDIO, 1);
  if (spec->controls)
    put_u32 (out, AIRLOCK_SPEC_CONTROLS, 1);
  if (spec->clock_ns)
    {
      guint8 v[8];

      wire_le64 (v, spec->clock_ns);
      put_tlv (out, AIRLOCK_SPEC_CLOCK_NS, v, sizeof v);
    }
  if (spec->tty)
    {
      guint8 v[4];

      wire_le16 (v, spec->tty_rows);
      wire_le16 (v + 2, spec->tty_cols);
      put_tlv (out, AIRLOCK_SPEC_TTY, v, sizeof v);
    }
  if (spec->shell_dir != NULL)
    put_tlv (out, AIRLOCK_SPEC_SHELL, spec->shell_dir, strlen (spec->shell_dir));
  if (spec->warp)
    put_u32 (out, AIRLOCK_SPEC_WARP, 1);
  if (spec->net_port)
    put_u32 (out, AIRLOCK_SPEC_NET_PORT, 1);
  if (spec->stop_signal)
    put_u32 (out, AIRLOCK_SPEC_STOP_SIGNAL, (guint32) spec->stop_signal);

  /* Checked after encoding: each piece fits, only the sum can overflow, and
   * the guest reads at most this much after the hello. */
  if (out->len > AIRLOCK_SPEC_MAX)
    {
      g_set_error (error, AIRLOCK_RUN_SPEC_ERROR, AIRLOCK_RUN_SPEC_ERROR_TOO_LARGE,
                   "run spec is %u bytes encoded (argv, environment and paths together), "
                   "at most %d are allowed", out->len, AIRLOCK_SPEC_MAX);
      return NULL;
    }
  return g_byte_array_free_to_bytes (g_steal_pointer (&out));
}
