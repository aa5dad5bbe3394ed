/* airlock replay's comparison: the recorded run (its bundle's
 * events.jsonl, network.jsonl and verdict.json) against the replay's
 * result, as multisets of attempts and of what the sinkhole served, the
 * controls by name, and the verdicts.  Apart from cmd-replay.c, which
 * checks the pinned inputs and runs the case, so each reads as one job. */
#include "config.h"

#include "harness.h"
#include "replay.h"

#include <json-glib/json-glib.h>
#include <string.h>

gboolean
replay_bool_or (JsonObject *o, const char *name, gboolean fallback)
{
  gboolean v = fallback;

  (void) airlock_json_get_bool (o, name, &v);
  return v;
}

/* "EXE KEYLINE" of each workload record (not execve): the attempt set. */
static GHashTable *
recorded_attempts (const Recorded *r, GError **error)
{
  g_autoptr (GBytes) text = airlock_bundle_read_file (r->dir, "events.jsonl", error);
  g_auto (GStrv) lines = NULL;
  GHashTable *set;

  if (!text)
    return NULL;
  set = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  lines = g_strsplit (g_bytes_get_data (text, NULL), "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      g_autoptr (JsonNode) root = NULL;
      JsonObject *o;
      char *key;

      if (!*lines[i] || !(root = airlock_json_parse_bounded (lines[i], strlen (lines[i]), NULL, NULL))
          || !JSON_NODE_HOLDS_OBJECT (root))
        continue;
      o = json_node_get_object (root);
      if (g_strcmp0 (airlock_json_get_string (o, "kind"), "syscall") != 0 || g_strcmp0 (airlock_json_get_string (o, "phase"), "workload") != 0
          || g_strcmp0 (airlock_json_get_string (o, "syscall"), "execve") == 0 || g_strcmp0 (airlock_json_get_string (o, "syscall"), "execveat") == 0)
        continue;
      key = g_strdup_printf ("%s %s", airlock_json_get_string (o, "exe") ? airlock_json_get_string (o, "exe") : "?", airlock_json_get_string (o, "key"));
      g_hash_table_insert (set, key, GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (set, key)) + 1));
    }
  return set;
}

static GHashTable *
replayed_attempts (AirlockResult *result)
{
  GPtrArray *attempts = airlock_result_get_attempts (result);
  GHashTable *set = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint i = 0; i < attempts->len; i++)
    {
      const AirlockAttempt *a = attempts->pdata[i];
      char *key = g_strdup_printf ("%s %s", a->exe ? a->exe : "?", a->key);

      g_hash_table_insert (set, key, GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (set, key)) + 1));
    }
  return set;
}

static gint
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* Lines "- N x KEY" (only recorded) and "+ N x KEY" (only replayed),
 * sorted, into @diffs. */
static void
diff_sets (GHashTable *recorded, GHashTable *replayed, GPtrArray *diffs)
{
  g_autoptr (GPtrArray) keys = g_ptr_array_new ();
  GHashTableIter it;
  gpointer k;

  g_hash_table_iter_init (&it, recorded);
  while (g_hash_table_iter_next (&it, &k, NULL))
    g_ptr_array_add (keys, k);
  g_hash_table_iter_init (&it, replayed);
  while (g_hash_table_iter_next (&it, &k, NULL))
    if (!g_hash_table_contains (recorded, k))
      g_ptr_array_add (keys, k);
  g_ptr_array_sort (keys, compare_strings);
  for (guint i = 0; i < keys->len; i++)
    {
      guint a = GPOINTER_TO_UINT (g_hash_table_lookup (recorded, keys->pdata[i]));
      guint b = GPOINTER_TO_UINT (g_hash_table_lookup (replayed, keys->pdata[i]));

      if (a > b)
        g_ptr_array_add (diffs, g_strdup_printf ("- %u x %s (only in the recorded run)", a - b,
                                                 (char *) keys->pdata[i]));
      else if (b > a)
        g_ptr_array_add (diffs, g_strdup_printf ("+ %u x %s (only in the replay)", b - a,
                                                 (char *) keys->pdata[i]));
    }
}

/* "network: KEY" of each of @log's records (airlock_network_replay_keys()),
 * counted. */
static GHashTable *
network_set (const AirlockSinkholeLog *log)
{
  g_autoptr (AirlockNetworkReport) report = airlock_network_report_new (log, NULL);
  g_autoptr (GPtrArray) keys = airlock_network_replay_keys (report);
  GHashTable *set = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint i = 0; i < keys->len; i++)
    {
      char *key = g_strdup_printf ("network: %s", (const char *) keys->pdata[i]);

      g_hash_table_insert (set, key, GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (set, key)) + 1));
    }
  return set;
}

/* What the sinkhole served the recorded run (network.jsonl) against what
 * it served the replay: the names asked and the destinations reached.
 * FALSE (and nothing added) when the recorded run has no records to
 * compare: a bundle from before the sinkhole. */
static gboolean
diff_network (const Recorded *r, AirlockResult *result, GPtrArray *diffs)
{
  const AirlockRunRecord *now = airlock_result_get_record (result);
  JsonObject *files = airlock_json_get_object (json_node_get_object (r->root), "files");
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) bytes = NULL;
  g_autoptr (AirlockSinkholeLog) log = NULL;
  g_autoptr (GHashTable) before = NULL;
  g_autoptr (GHashTable) after = NULL;

  if (!files || !json_object_has_member (files, AIRLOCK_BUNDLE_NETWORK_FILE))
    return FALSE;
  bytes = airlock_bundle_read_file (r->dir, AIRLOCK_BUNDLE_NETWORK_FILE, &error);
  if (!bytes)
    {
      g_ptr_array_add (diffs, g_strdup_printf ("network: cannot read the recorded run's records: %s",
                                               error->message));
      return TRUE;
    }
  log = airlock_sinkhole_log_new_from_bytes (bytes, &error);
  if (!log)
    {
      g_ptr_array_add (diffs, g_strdup_printf ("network: the recorded run's records do not read: %s",
                                               error->message));
      return TRUE;
    }
  if (!now->sinkhole)
    {
      g_ptr_array_add (diffs, g_strdup_printf ("network: the replay has no records of its network: %s",
                                               now->sinkhole_error ? now->sinkhole_error : "?"));
      return TRUE;
    }
  before = network_set (log);
  after = network_set (now->sinkhole);
  diff_sets (before, after, diffs);
  return TRUE;
}

/* The recorded controls (verdict.json) against the replay's. */
static void
diff_controls (const Recorded *r, AirlockResult *result, GPtrArray *diffs, GError **error)
{
  g_autofree char *path = g_build_filename (r->dir, "verdict.json", NULL);
  g_autoptr (JsonNode) root = airlock_json_load_bounded (path, path, error);
  GPtrArray *now = airlock_result_get_controls (result);
  JsonObject *v, *controls;
  JsonNode *each;
  const char *kind;

  if (!root || !JSON_NODE_HOLDS_OBJECT (root))
    return;
  v = json_node_get_object (root);
  controls = airlock_json_get_object (v, "controls");
  each = controls ? json_object_get_member (controls, "each") : NULL;
  for (guint i = 0; each && JSON_NODE_HOLDS_ARRAY (each) && i < json_array_get_length (json_node_get_array (each)); i++)
    {
      JsonNode *e = json_array_get_element (json_node_get_array (each), i);
      JsonObject *c = JSON_NODE_HOLDS_OBJECT (e) ? json_node_get_object (e) : NULL;
      gboolean was_ok = replay_bool_or (c, "supervisor", FALSE) && replay_bool_or (c, "capture", FALSE);
      gboolean found = FALSE, is_ok = FALSE;

      for (guint k = 0; k < now->len; k++)
        {
          const AirlockResultControl *rc = now->pdata[k];

          if (g_strcmp0 (rc->name, airlock_json_get_string (c, "name")) == 0)
            {
              found = TRUE;
              is_ok = rc->by_supervisor && rc->in_capture;
            }
        }
      if (!found || was_ok != is_ok)
        g_ptr_array_add (diffs, g_strdup_printf ("control %s: %s in the recorded run, %s in the replay",
                                                 airlock_json_get_string (c, "name"), was_ok ? "observed" : "missing",
                                                 !found ? "absent" : is_ok ? "observed" : "missing"));
    }
  if (each && JSON_NODE_HOLDS_ARRAY (each) && json_array_get_length (json_node_get_array (each)) != now->len)
    g_ptr_array_add (diffs, g_strdup_printf ("controls: %u in the recorded run, %u in the replay",
                                             json_array_get_length (json_node_get_array (each)), now->len));
  kind = airlock_json_get_string (v, "verdict");
  if (g_strcmp0 (kind, airlock_verdict_kind_to_string (airlock_result_get_verdict (result))) != 0)
    g_ptr_array_add (diffs, g_strdup_printf ("verdict: %s in the recorded run, %s in the replay",
                                             kind ? kind : "?",
                                             airlock_verdict_kind_to_string (airlock_result_get_verdict (result))));
}

gboolean
replay_compare (const Recorded *r, AirlockResult *result, GPtrArray *diffs,
                gboolean *ret_compared_network, GError **error)
{
  g_autoptr (GHashTable) before = NULL;
  g_autoptr (GHashTable) after = NULL;
  g_autoptr (GError) verdict_error = NULL;

  before = recorded_attempts (r, error);
  if (!before)
    return FALSE;
  after = replayed_attempts (result);
  diff_sets (before, after, diffs);
  *ret_compared_network = diff_network (r, result, diffs);
  diff_controls (r, result, diffs, &verdict_error);
  if (verdict_error)
    g_ptr_array_add (diffs, g_strdup_printf ("cannot read the recorded verdict: %s",
                                             verdict_error->message));
  return TRUE;
}
