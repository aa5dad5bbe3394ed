/* The case (case.h): what to run and how to judge it, set piece by
 * piece; a run takes a copy when it starts, so a case may be changed and
 * run again while an earlier run goes on. */
#include "config.h"

#include "case/case-state-private.h"

#include <string.h>

G_DEFINE_QUARK (airlock-case-error-quark, airlock_case_error)

static void
fixture_free (gpointer data)
{
  Fixture *f = data;

  g_free (f->name);
  g_bytes_unref (f->response);
  g_free (f);
}

AirlockCase *
airlock_case_new (const char *image_ref)
{
  AirlockCase *c = g_new0 (AirlockCase, 1);

  c->image_ref = g_strdup (image_ref);
  c->env_names = g_ptr_array_new_with_free_func (g_free);
  c->env_values = g_ptr_array_new_with_free_func (g_free);
  c->timeout_s = DEFAULT_TIMEOUT_S;
  c->guest_time_s = DEFAULT_GUEST_TIME_S;
  c->controls = TRUE;
  c->policy = airlock_policy_new_default ();
  c->serve = g_ptr_array_new_with_free_func (fixture_free);
  return c;
}

void
airlock_case_free (AirlockCase *c)
{
  if (!c)
    return;
  g_free (c->name);
  g_free (c->image_ref);
  g_free (c->guest_program);
  g_strfreev (c->args);
  g_ptr_array_unref (c->env_names);
  g_ptr_array_unref (c->env_values);
  g_clear_pointer (&c->stdin_bytes, g_bytes_unref);
  g_clear_object (&c->stdin_stream);
  airlock_policy_free (c->policy);
  g_free (c->bundle_dir);
  g_clear_pointer (&c->key, g_bytes_unref);
  g_free (c->bundle_gate);
  g_free (c->test_mode);
  g_ptr_array_unref (c->serve);
  g_free (c);
}

/* A policy's copy, through the text that parses back to it. */
static AirlockPolicy *
policy_copy (const AirlockPolicy *policy)
{
  g_autofree char *text = airlock_policy_to_text (policy);
  AirlockPolicy *copy = airlock_policy_parse (text, strlen (text), "policy", NULL);

  /* Our own rules as written always parse again. */
  g_assert (copy != NULL);
  return copy;
}

AirlockCase *
airlock_case_copy (const AirlockCase *c)
{
  AirlockCase *d = airlock_case_new (c->image_ref);

  d->name = g_strdup (c->name);
  d->guest_program = g_strdup (c->guest_program);
  d->args = g_strdupv (c->args);
  for (guint i = 0; i < c->env_names->len; i++)
    {
      g_ptr_array_add (d->env_names, g_strdup (c->env_names->pdata[i]));
      g_ptr_array_add (d->env_values, g_strdup (c->env_values->pdata[i]));
    }
  d->stdin_bytes = c->stdin_bytes ? g_bytes_ref (c->stdin_bytes) : NULL;
  d->stdin_stream = c->stdin_stream ? g_object_ref (c->stdin_stream) : NULL;
  d->timeout_s = c->timeout_s;
  d->guest_time_s = c->guest_time_s;
  d->controls = c->controls;
  airlock_policy_free (d->policy);
  d->policy = policy_copy (c->policy);
  d->bundle_dir = g_strdup (c->bundle_dir);
  d->key = c->key ? g_bytes_ref (c->key) : NULL;
  d->bundle_gate = g_strdup (c->bundle_gate);
  d->test_mode = g_strdup (c->test_mode);
  d->clock_ns = c->clock_ns;
  for (guint i = 0; i < c->serve->len; i++)
    {
      const Fixture *f = g_ptr_array_index (c->serve, i);
      airlock_case_serve (d, f->name, f->port, f->response);
    }
  d->output_func = c->output_func;
  d->output_data = c->output_data;
  d->shell = c->shell;
  d->tty = c->tty;
  d->tty_rows = c->tty_rows;
  d->tty_cols = c->tty_cols;
  d->event_func = c->event_func;
  d->event_data = c->event_data;
  return d;
}

void
airlock_case_set_name (AirlockCase *c, const char *name)
{
  g_free (c->name);
  c->name = g_strdup (name);
}

void
airlock_case_set_args (AirlockCase *c, const char *const *args)
{
  g_strfreev (c->args);
  c->args = args && args[0] ? g_strdupv ((GStrv) args) : NULL;
}

void
airlock_case_set_env (AirlockCase *c, const char *name, const char *value)
{
  for (guint i = 0; i < c->env_names->len; i++)
    if (g_strcmp0 (c->env_names->pdata[i], name) == 0)
      {
        g_free (c->env_values->pdata[i]);
        c->env_values->pdata[i] = g_strdup (value);
        return;
      }
  g_ptr_array_add (c->env_names, g_strdup (name));
  g_ptr_array_add (c->env_values, g_strdup (value));
}

void
airlock_case_set_stdin_bytes (AirlockCase *c, GBytes *data)
{
  g_clear_object (&c->stdin_stream);
  g_clear_pointer (&c->stdin_bytes, g_bytes_unref);
  c->stdin_bytes = data ? g_bytes_ref (data) : NULL;
}

void
airlock_case_set_stdin_stream (AirlockCase *c, GInputStream *stream)
{
  g_clear_pointer (&c->stdin_bytes, g_bytes_unref);
  g_clear_object (&c->stdin_stream);
  c->stdin_stream = stream ? g_object_ref (stream) : NULL;
}

void
airlock_case_set_timeout (AirlockCase *c, guint seconds)
{
  c->timeout_s = seconds;
}

void
airlock_case_set_guest_time (AirlockCase *c, guint seconds)
{
  c->guest_time_s = seconds;
}

void
airlock_case_set_controls (AirlockCase *c, gboolean controls)
{
  c->controls = controls;
}

gboolean
airlock_case_allow (AirlockCase *c, const char *rules, const char *name, GError **error)
{
  return airlock_policy_append (c->policy, rules, strlen (rules), name ? name : "rules", error);
}

gboolean
airlock_case_load_policy (AirlockCase *c, const char *path, GError **error)
{
  g_autoptr (AirlockPolicy) loaded = airlock_policy_load (path, error);
  g_autofree char *text = NULL;

  if (!loaded)
    return FALSE;
  text = airlock_policy_to_text (loaded);
  return airlock_policy_append (c->policy, text, strlen (text), path, error);
}

void
airlock_case_set_policy (AirlockCase *c, const AirlockPolicy *policy)
{
  airlock_policy_free (c->policy);
  c->policy = policy_copy (policy);
}

void
airlock_case_set_bundle_dir (AirlockCase *c, const char *dir)
{
  g_free (c->bundle_dir);
  c->bundle_dir = g_strdup (dir);
}

void
airlock_case_set_bundle_key (AirlockCase *c, GBytes *key)
{
  g_clear_pointer (&c->key, g_bytes_unref);
  c->key = key ? g_bytes_ref (key) : NULL;
}

void
airlock_case_set_bundle_gate (AirlockCase *c, const char *gate_id)
{
  g_free (c->bundle_gate);
  c->bundle_gate = g_strdup (gate_id);
}

void
airlock_case_set_test_mode (AirlockCase *c, const char *mode)
{
  g_free (c->test_mode);
  c->test_mode = g_strdup (mode);
}

void
airlock_case_set_clock (AirlockCase *c, guint64 clock_ns)
{
  c->clock_ns = clock_ns;
}

char *
airlock_case_fixture_line (const char *name, guint16 port, const char *sha256_hex)
{
  g_autofree char *lower = g_ascii_strdown (name, -1);

  return g_strdup_printf ("%s%s:%u sha256:%s", lower, g_str_has_suffix (lower, ".") ? "" : ".",
                          port, sha256_hex);
}

gboolean
airlock_case_serve (AirlockCase *c, const char *name, guint16 port, GBytes *response)
{
  g_autofree char *lower = NULL;
  Fixture *f;

  g_return_val_if_fail (name && response, FALSE);
  if (!*name || port == 0 || strpbrk (name, ":=/ \t\n") || strlen (name) > 254)
    return FALSE;
  lower = g_ascii_strdown (name, -1);
  /* A later fixture for the same name and port replaces the earlier. */
  f = g_new0 (Fixture, 1);
  f->name = g_str_has_suffix (lower, ".") ? g_steal_pointer (&lower)
                                          : g_strconcat (lower, ".", NULL);
  for (guint i = 0; i < c->serve->len; i++)
    {
      const Fixture *o = g_ptr_array_index (c->serve, i);
      if (o->port == port && g_str_equal (o->name, f->name))
        g_ptr_array_remove_index (c->serve, i--);
    }
  f->port = port;
  f->response = g_bytes_ref (response);
  g_ptr_array_add (c->serve, f);
  return TRUE;
}

void
airlock_case_set_guest_program (AirlockCase *c, const char *name)
{
  g_free (c->guest_program);
  c->guest_program = g_strdup (name);
}

void
airlock_case_set_output_func (AirlockCase *c, OutputFunc func, gpointer user_data)
{
  c->output_func = func;
  c->output_data = user_data;
}

const char *
airlock_case_get_image_ref (const AirlockCase *c)
{
  return c->image_ref;
}

void
airlock_case_set_shell (AirlockCase *c, gboolean shell)
{
  c->shell = shell;
}

void
airlock_case_set_tty (AirlockCase *c, gboolean tty, guint16 rows, guint16 cols)
{
  c->tty = tty;
  c->tty_rows = rows;
  c->tty_cols = cols;
}

void
airlock_case_set_event_func (AirlockCase *c, EventFunc func, gpointer user_data)
{
  c->event_func = func;
  c->event_data = user_data;
}
