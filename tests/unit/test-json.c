/* The depth check every untrusted JSON document passes before json-glib
 * parses it (lib/json-bounded.c), and the readers that rely on it: a
 * document nested deeper than the bound is refused with an error, never
 * handed to json-glib's recursive parser (which overflows the stack).
 * Then the public member helpers (lib/json.h, json-util.c) the bundle and
 * the command write and read their JSON with. */
#include "config.h"

#include "json-bounded-private.h"
#include "json-util-private.h"
#include "json.h"
#include "bundle/bundle-read.h"
#include "bundle/bundle.h"
#include "fsutil-private.h"

#include <glib/gstdio.h>
#include <string.h>

/* @n times @open, @middle, @n times @close. */
static char *
nested (guint n, const char *open, const char *middle, const char *close)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < n; i++)
    g_string_append (s, open);
  g_string_append (s, middle);
  for (guint i = 0; i < n; i++)
    g_string_append (s, close);
  return g_string_free (s, FALSE);
}

static gboolean
check (const char *text, guint max_depth, GError **error)
{
  return airlock_json_check_depth (text, strlen (text), max_depth, "doc.json", error);
}

static void
test_depth_arrays (void)
{
  g_autofree char *at_bound = nested (AIRLOCK_JSON_MAX_DEPTH, "[", "1", "]");
  g_autofree char *over = nested (AIRLOCK_JSON_MAX_DEPTH + 1, "[", "1", "]");
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) root = NULL;

  root = airlock_json_parse_bounded (at_bound, strlen (at_bound), "doc.json", &error);
  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_ARRAY (root));

  g_assert_null (airlock_json_parse_bounded (over, strlen (over), "doc.json", &error));
  g_assert_error (error, AIRLOCK_JSON_ERROR, AIRLOCK_JSON_ERROR_TOO_DEEP);
  /* The document and the bound; the byte is the first '[' too many. */
  g_assert_cmpstr (error->message, ==, "doc.json: JSON nested more than 64 levels deep (at byte 64)");
}

static void
test_depth_objects (void)
{
  g_autofree char *ok = nested (3, "{\"a\":", "null", "}");
  g_autofree char *over = nested (4, "{\"a\":", "null", "}");
  g_autofree char *mixed = nested (40, "{\"k\":[", "0", "]}");
  g_autoptr (GError) error = NULL;

  g_assert_true (check (ok, 3, &error));
  g_assert_no_error (error);
  g_assert_false (check (over, 3, &error));
  g_assert_error (error, AIRLOCK_JSON_ERROR, AIRLOCK_JSON_ERROR_TOO_DEEP);
  g_clear_error (&error);
  /* Arrays and objects count alike: 80 levels. */
  g_assert_true (check (mixed, 80, NULL));
  g_assert_false (check (mixed, 79, &error));
  g_assert_error (error, AIRLOCK_JSON_ERROR, AIRLOCK_JSON_ERROR_TOO_DEEP);
}

/* The attack itself: json-glib alone dies of 100,000 '['. */
static void
test_depth_huge (void)
{
  g_autofree char *deep = nested (100000, "[", "", "");
  g_autofree char *deep_objects = nested (150000, "{\"a\":", "", "");
  g_autoptr (GError) error = NULL;

  g_assert_null (airlock_json_parse_bounded (deep, strlen (deep), "index.json", &error));
  g_assert_error (error, AIRLOCK_JSON_ERROR, AIRLOCK_JSON_ERROR_TOO_DEEP);
  g_clear_error (&error);
  g_assert_null (airlock_json_parse_bounded (deep_objects, strlen (deep_objects), "manifest.json", &error));
  g_assert_error (error, AIRLOCK_JSON_ERROR, AIRLOCK_JSON_ERROR_TOO_DEEP);
  g_assert_true (g_str_has_prefix (error->message, "manifest.json: "));
}

static void
test_depth_strings_do_not_count (void)
{
  g_autofree char *brackets = nested (1000, "[", "", "}");
  g_autofree char *inside = g_strdup_printf ("{\"a\":[\"%s\"]}", brackets);
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) root = NULL;

  root = airlock_json_parse_bounded (inside, strlen (inside), "doc.json", &error);
  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (root));
  /* Escaped quotes and backslashes do not end a string early... */
  g_assert_true (check ("[\"\\\"[[[[\", \"\\\\\", \"\\\\\\\"[[[\"]", 1, &error));
  g_assert_no_error (error);
  /* ...and a string that ends is followed by real nesting that counts. */
  g_assert_false (check ("[\"\\\\\",[[1]]]", 2, &error));
  g_assert_error (error, AIRLOCK_JSON_ERROR, AIRLOCK_JSON_ERROR_TOO_DEEP);
  g_clear_error (&error);
  /* Every JSON escape, a surrogate pair. */
  g_assert_true (check ("[\"\\/\\b\\f\\n\\r\\t\\u00e9\\uD83D\\uDE00\"]", 1, &error));
  g_assert_no_error (error);
}

/* What json-glib 1.6 reads but the scan would not see alike: refused, so
 * no bracket hides from the count. */
static void
test_depth_not_plain_json (void)
{
  static const char *const refused[] = {
    "/* \" */ [[1]] /* \" */", /* a comment holding a quote */
    "['\"', [[1]], '\"']",     /* single quotes around a double quote */
    "[\"\\uD800\", \"[[1]]\"]", /* json-glib eats the '"' after a lone surrogate */
    "[\"\\uDC00\"]",
    "[\"\\uD800\\u0041\"]",
    "[\"\\u12\"]",             /* json-glib eats the '"' as a hex digit try */
    "[\"\\x\"]",
    "[\"abc",                  /* never ends */
    "[1]]",                    /* closes nothing */
  };
  g_autoptr (GError) error = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (refused); i++)
    {
      g_test_message ("%s", refused[i]);
      g_assert_false (check (refused[i], 64, &error));
      g_assert_error (error, AIRLOCK_JSON_ERROR, AIRLOCK_JSON_ERROR_INVALID);
      g_assert_true (g_str_has_prefix (error->message, "doc.json: not "));
      g_clear_error (&error);
    }
  /* A NUL byte: json-glib would stop there; the scan refuses it. */
  g_assert_false (airlock_json_check_depth ("[1]\0[[[", 7, 64, NULL, &error));
  g_assert_error (error, AIRLOCK_JSON_ERROR, AIRLOCK_JSON_ERROR_INVALID);
  g_assert_cmpstr (error->message, ==, "not valid JSON: a NUL byte at byte 3");
}

static void
test_parse_errors (void)
{
  g_autoptr (GError) error = NULL;

  g_assert_null (airlock_json_parse_bounded ("{\"a\" 1}", 7, "doc.json", &error));
  g_assert_error (error, AIRLOCK_JSON_ERROR, AIRLOCK_JSON_ERROR_INVALID);
  g_assert_true (g_str_has_prefix (error->message, "doc.json: not valid JSON: "));
  g_clear_error (&error);
  g_assert_null (airlock_json_parse_bounded (NULL, 0, "doc.json", &error));
  g_assert_error (error, AIRLOCK_JSON_ERROR, AIRLOCK_JSON_ERROR_INVALID);
  g_assert_cmpstr (error->message, ==, "doc.json: no JSON value");
}

/* A bundle whose manifest.json (and verdict.json) is 150,000 deep: the
 * reader (`airlock show`) and the verifier (`airlock verify`) report it,
 * as they report any file they cannot read, instead of crashing. */
static void
test_bundle_deep_manifest (void)
{
  g_autofree char *dir = g_dir_make_tmp ("airlock-test-json-XXXXXX", NULL);
  g_autofree char *manifest = g_build_filename (dir, "manifest.json", NULL);
  g_autofree char *verdict = g_build_filename (dir, "verdict.json", NULL);
  g_autofree char *deep = nested (150000, "{\"a\":", "1", "}");
  g_autoptr (AirlockBundleReport) report = NULL;
  g_autoptr (AirlockBundleView) view = NULL;
  gboolean named = FALSE;

  g_assert_true (g_file_set_contents (manifest, deep, -1, NULL));
  g_assert_true (g_file_set_contents (verdict, deep, -1, NULL));

  report = airlock_bundle_verify (dir, NULL);
  for (guint i = 0; i < report->problems->len; i++)
    {
      const AirlockBundleProblem *p = report->problems->pdata[i];

      g_test_message ("verify: %s: %s", p->file, p->message);
      named = named
              || (g_strcmp0 (p->file, "manifest.json") == 0
                  && g_str_has_prefix (p->message, "JSON nested more than 64 levels deep"));
    }
  g_assert_true (named);
  g_assert_null (report->verdict);

  named = FALSE;
  view = airlock_bundle_read (dir, 0);
  for (guint i = 0; i < view->problems->len; i++)
    {
      g_test_message ("read: %s", (char *) view->problems->pdata[i]);
      named = named
              || g_str_has_prefix (view->problems->pdata[i],
                                   "manifest.json: JSON nested more than 64 levels deep");
    }
  g_assert_true (named);

  airlock_rm_rf (dir);
  g_assert_false (g_file_test (dir, G_FILE_TEST_EXISTS));
}

/* The image's digests, as the bundle, `show --json` and the gate's --json
 * line write them: three members in a fixed order, no index as null. */
static void
test_image_digests (void)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autofree char *text = NULL;

  json_builder_begin_object (b);
  airlock_json_set_str (b, "reference", "oci:x");
  airlock_json_set_image_digests (b, NULL, "sha256:m", "sha256:c");
  json_builder_end_object (b);
  text = airlock_json_builder_to_text (b, FALSE);
  g_assert_cmpstr (text, ==,
                   "{\"reference\":\"oci:x\",\"index\":null,\"manifest\":\"sha256:m\","
                   "\"config\":\"sha256:c\"}");
}

/* What the command's --json lines are written with: each setter's member,
 * NULL as JSON null, and the text on one line or pretty with its '\n'. */
static void
test_members_written (void)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  const char *const strv[] = { "a", "b", NULL };
  g_autofree char *line = NULL;
  g_autofree char *pretty = NULL;
  g_autoptr (JsonNode) back = NULL;

  json_builder_begin_object (b);
  airlock_json_set_str (b, "s", "x\"y");
  airlock_json_set_str (b, "none", NULL);
  airlock_json_set_int (b, "i", -5);
  airlock_json_set_bool (b, "b", TRUE);
  airlock_json_set_strv (b, "v", strv);
  airlock_json_set_strv (b, "nv", NULL);
  json_builder_set_member_name (b, "elements");
  json_builder_begin_array (b);
  airlock_json_set_str (b, NULL, "e");
  airlock_json_set_int (b, NULL, 7);
  json_builder_end_array (b);
  json_builder_end_object (b);

  line = airlock_json_builder_to_text (b, FALSE);
  g_assert_cmpstr (line, ==,
                   "{\"s\":\"x\\\"y\",\"none\":null,\"i\":-5,\"b\":true,\"v\":[\"a\",\"b\"],"
                   "\"nv\":null,\"elements\":[\"e\",7]}");
  pretty = airlock_json_builder_to_text (b, TRUE);
  g_assert_true (g_str_has_suffix (pretty, "}\n"));
  g_assert_nonnull (strchr (pretty, '\n'));
  back = airlock_json_parse_bounded (pretty, strlen (pretty), "pretty", NULL);
  g_assert_nonnull (back);
  g_assert_cmpstr (airlock_json_get_string (json_node_get_object (back), "s"), ==, "x\"y");
}

static char *
upper (const char *s)
{
  return g_ascii_strup (s, -1);
}

/* What the command reads back from a bundle's files: a member of the
 * wrong type reads as absent (nothing read from a file is trusted), *ret
 * untouched; a NULL object reads as empty. */
static void
test_members_read_type_checked (void)
{
  static const char doc[] = "{\"s\":\"x\",\"i\":3,\"d\":1.5,\"b\":false,\"o\":{\"k\":\"v\"},"
                            "\"v\":[\"a\",1,\"b\",null],\"n\":null}";
  g_autoptr (JsonNode) root = airlock_json_parse_bounded (doc, strlen (doc), "doc.json", NULL);
  JsonObject *o = json_node_get_object (root);
  g_auto (GStrv) v = NULL;
  g_auto (GStrv) mapped = NULL;
  gint64 i = 42;
  gboolean b = TRUE;

  g_assert_cmpstr (airlock_json_get_string (o, "s"), ==, "x");
  g_assert_null (airlock_json_get_string (o, "i"));
  g_assert_null (airlock_json_get_string (o, "n"));
  g_assert_null (airlock_json_get_string (o, "missing"));

  g_assert_true (airlock_json_get_int (o, "i", &i));
  g_assert_cmpint (i, ==, 3);
  i = 42;
  g_assert_false (airlock_json_get_int (o, "d", &i));
  g_assert_false (airlock_json_get_int (o, "b", &i));
  g_assert_false (airlock_json_get_int (o, "s", &i));
  g_assert_cmpint (i, ==, 42);

  g_assert_true (airlock_json_get_bool (o, "b", &b));
  g_assert_false (b);
  b = TRUE;
  g_assert_false (airlock_json_get_bool (o, "i", &b));
  g_assert_true (b);

  g_assert_cmpstr (airlock_json_get_string (airlock_json_get_object (o, "o"), "k"), ==, "v");
  g_assert_null (airlock_json_get_object (o, "s"));

  v = airlock_json_get_strv (o, "v", NULL);
  g_assert_cmpstrv (v, ((const char *const[]) { "a", "b", NULL }));
  mapped = airlock_json_get_strv (o, "v", upper);
  g_assert_cmpstrv (mapped, ((const char *const[]) { "A", "B", NULL }));
  g_assert_null (airlock_json_get_strv (o, "s", NULL));
  g_assert_null (airlock_json_get_strv (o, "missing", NULL));

  g_assert_null (airlock_json_get_string (NULL, "s"));
  g_assert_null (airlock_json_get_object (NULL, "o"));
  g_assert_false (airlock_json_get_int (NULL, "i", &i));
  g_assert_false (airlock_json_get_bool (NULL, "b", &b));
  g_assert_null (airlock_json_get_strv (NULL, "v", NULL));
}

/* A file read as airlock_json_load_bounded() reads cache records and a
 * bundle's verdict.json: the bound holds, a missing file is its
 * G_FILE_ERROR. */
static void
test_load_bounded (void)
{
  g_autofree char *dir = g_dir_make_tmp ("airlock-test-json-XXXXXX", NULL);
  g_autofree char *ok = g_build_filename (dir, "ok.json", NULL);
  g_autofree char *deep_path = g_build_filename (dir, "deep.json", NULL);
  g_autofree char *missing = g_build_filename (dir, "missing.json", NULL);
  g_autofree char *deep = nested (AIRLOCK_JSON_MAX_DEPTH + 1, "[", "1", "]");
  g_autoptr (JsonNode) root = NULL;
  g_autoptr (GError) error = NULL;

  g_assert_true (g_file_set_contents (ok, "{\"a\":[1]}", -1, NULL));
  g_assert_true (g_file_set_contents (deep_path, deep, -1, NULL));
  root = airlock_json_load_bounded (ok, ok, &error);
  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (root));
  g_assert_null (airlock_json_load_bounded (deep_path, "deep.json", &error));
  g_assert_error (error, AIRLOCK_JSON_ERROR, AIRLOCK_JSON_ERROR_TOO_DEEP);
  g_assert_true (g_str_has_prefix (error->message, "deep.json: "));
  g_clear_error (&error);
  g_assert_null (airlock_json_load_bounded (missing, missing, &error));
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
  airlock_rm_rf (dir);
}

/* A list of strings is always an array: [] for an empty or NULL list (an
 * empty GPtrArray's pdata may be NULL), never null. */
static void
test_string_array (void)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (GPtrArray) some = g_ptr_array_new ();
  g_autoptr (GPtrArray) none = g_ptr_array_new ();
  g_autofree char *text = NULL;

  g_ptr_array_add (some, (gpointer) "a");
  g_ptr_array_add (some, (gpointer) "b\"c");
  json_builder_begin_object (b);
  airlock_json_set_string_array (b, "some", some);
  airlock_json_set_string_array (b, "empty", none);
  airlock_json_set_string_array (b, "null", NULL);
  json_builder_end_object (b);
  text = airlock_json_builder_to_text (b, FALSE);
  g_assert_cmpstr (text, ==, "{\"some\":[\"a\",\"b\\\"c\"],\"empty\":[],\"null\":[]}");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/json/depth/arrays", test_depth_arrays);
  g_test_add_func ("/json/depth/objects", test_depth_objects);
  g_test_add_func ("/json/depth/hundred-thousand-deep", test_depth_huge);
  g_test_add_func ("/json/depth/strings-do-not-count", test_depth_strings_do_not_count);
  g_test_add_func ("/json/depth/not-plain-json-refused", test_depth_not_plain_json);
  g_test_add_func ("/json/parse/errors", test_parse_errors);
  g_test_add_func ("/json/bundle/deep-manifest-refused", test_bundle_deep_manifest);
  g_test_add_func ("/json/util/image-digests", test_image_digests);
  g_test_add_func ("/json/members/string-array", test_string_array);
  g_test_add_func ("/json/members/written", test_members_written);
  g_test_add_func ("/json/members/read-type-checked", test_members_read_type_checked);
  g_test_add_func ("/json/load/bounded-file", test_load_bounded);

  return g_test_run ();
}
