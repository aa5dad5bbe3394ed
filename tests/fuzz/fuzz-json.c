/* libFuzzer harness for the nesting-depth check (lib/json-bounded.c) that
 * every untrusted JSON document passes before json-glib parses it.
 *
 * Differential: the check must see the strings json-glib sees, or a
 * bracket hidden from it (in what it took for a string, json-glib for
 * structure) would reach json-glib's recursion uncounted.  So for any
 * input the check accepts under a small bound, json-glib goes no deeper
 * while it parses (its start signals), and its tree is no deeper.  Also: the check fails only with AIRLOCK_JSON_ERROR and
 * a printable-free-of-NUL message, and airlock_json_parse_bounded() never
 * returns a tree deeper than AIRLOCK_JSON_MAX_DEPTH.
 *
 * The bound here is 8 so that short inputs cross it; -max_len (meson)
 * lets inputs nest far past AIRLOCK_JSON_MAX_DEPTH too. */
#include "config.h"

#include "fuzz-util.h"
#include "json-bounded-private.h"

#include <stdint.h>
#include <string.h>

#define SMALL_DEPTH 8

/* Arrays and objects on the deepest path ("[1]" is 1, "1" is 0). */
static guint
tree_depth (JsonNode *node)
{
  guint deepest = 0;

  if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *array = json_node_get_array (node);

      for (guint i = 0; i < json_array_get_length (array); i++)
        deepest = MAX (deepest, tree_depth (json_array_get_element (array, i)));
      return deepest + 1;
    }
  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      g_autoptr (GList) members = json_object_get_values (json_node_get_object (node));

      for (GList *l = members; l; l = l->next)
        deepest = MAX (deepest, tree_depth (l->data));
      return deepest + 1;
    }
  return 0;
}

/* The depth json-glib reaches while it parses, from its start and end
 * signals: a parse that recurses deep and then fails (an unterminated
 * string after the brackets) would still have overflowed the stack. */
typedef struct {
  guint depth;
  guint deepest;
} Reached;

static void
on_start (JsonParser *parser, gpointer user_data)
{
  Reached *r = user_data;

  r->depth++;
  r->deepest = MAX (r->deepest, r->depth);
}

static void
on_end (JsonParser *parser, gpointer node, gpointer user_data)
{
  Reached *r = user_data;

  if (r->depth)
    r->depth--;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const char *text = (const char *) data;
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) bounded = NULL;

  if (airlock_json_check_depth (text, size, SMALL_DEPTH, "fuzz.json", &error))
    {
      g_autoptr (JsonParser) parser = json_parser_new_immutable ();
      Reached reached = { 0 };

      fuzz_check (error == NULL);
      g_signal_connect (parser, "array-start", G_CALLBACK (on_start), &reached);
      g_signal_connect (parser, "object-start", G_CALLBACK (on_start), &reached);
      g_signal_connect (parser, "array-end", G_CALLBACK (on_end), &reached);
      g_signal_connect (parser, "object-end", G_CALLBACK (on_end), &reached);
      /* Safe: the check said at most SMALL_DEPTH deep.  Whether or not
       * json-glib then fails, it must not have gone deeper. */
      if (size && json_parser_load_from_data (parser, text, (gssize) size, NULL)
          && json_parser_get_root (parser))
        fuzz_check (tree_depth (json_parser_get_root (parser)) <= SMALL_DEPTH);
      fuzz_check (reached.deepest <= SMALL_DEPTH);
    }
  else
    {
      fuzz_check (error && error->domain == AIRLOCK_JSON_ERROR);
      fuzz_check (g_str_has_prefix (error->message, "fuzz.json: "));
    }
  g_clear_error (&error);

  bounded = airlock_json_parse_bounded (text, size, NULL, &error);
  fuzz_check ((bounded == NULL) == (error != NULL));
  if (bounded)
    fuzz_check (tree_depth (bounded) <= AIRLOCK_JSON_MAX_DEPTH);
  else
    fuzz_check (error->domain == AIRLOCK_JSON_ERROR);
  return 0;
}
