/* The JSON and hex toolbox (json-util-private.h). */
#include "config.h"

#include "json-util-private.h"

#include <string.h>

void
airlock_json_set_str (JsonBuilder *b, const char *name, const char *value)
{
  if (name)
    json_builder_set_member_name (b, name);
  if (value)
    json_builder_add_string_value (b, value);
  else
    json_builder_add_null_value (b);
}

void
airlock_json_set_int (JsonBuilder *b, const char *name, gint64 value)
{
  if (name)
    json_builder_set_member_name (b, name);
  json_builder_add_int_value (b, value);
}

void
airlock_json_set_bool (JsonBuilder *b, const char *name, gboolean value)
{
  if (name)
    json_builder_set_member_name (b, name);
  json_builder_add_boolean_value (b, value);
}

void
airlock_json_set_strv (JsonBuilder *b, const char *name, const char *const *strv)
{
  if (name)
    json_builder_set_member_name (b, name);
  if (!strv)
    {
      json_builder_add_null_value (b);
      return;
    }
  json_builder_begin_array (b);
  for (guint i = 0; strv[i]; i++)
    json_builder_add_string_value (b, strv[i]);
  json_builder_end_array (b);
}

void
airlock_json_set_image_digests (JsonBuilder *b, const char *index, const char *manifest,
                                const char *config)
{
  airlock_json_set_str (b, "index", index);
  airlock_json_set_str (b, "manifest", manifest);
  airlock_json_set_str (b, "config", config);
}

void
airlock_json_set_string_array (JsonBuilder *b, const char *name, GPtrArray *strings)
{
  if (name)
    json_builder_set_member_name (b, name);
  json_builder_begin_array (b);
  for (guint i = 0; strings && i < strings->len; i++)
    json_builder_add_string_value (b, strings->pdata[i]);
  json_builder_end_array (b);
}

char *
airlock_json_builder_to_text (JsonBuilder *b, gboolean pretty)
{
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  g_autofree char *text = NULL;

  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, pretty);
  text = json_generator_to_data (gen, NULL);
  return pretty ? g_strconcat (text, "\n", NULL) : g_steal_pointer (&text);
}

static JsonNode *
member (JsonObject *o, const char *name)
{
  return o ? json_object_get_member (o, name) : NULL;
}

JsonObject *
airlock_json_get_object (JsonObject *o, const char *name)
{
  JsonNode *n = member (o, name);

  return n && JSON_NODE_HOLDS_OBJECT (n) ? json_node_get_object (n) : NULL;
}

JsonArray *
airlock_json_get_array (JsonObject *o, const char *name)
{
  JsonNode *n = member (o, name);

  return n && JSON_NODE_HOLDS_ARRAY (n) ? json_node_get_array (n) : NULL;
}

const char *
airlock_json_get_string (JsonObject *o, const char *name)
{
  JsonNode *n = member (o, name);

  return n && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING
             ? json_node_get_string (n)
             : NULL;
}

gboolean
airlock_json_get_int (JsonObject *o, const char *name, gint64 *ret)
{
  JsonNode *n = member (o, name);

  if (!n || !JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_INT64)
    return FALSE;
  *ret = json_node_get_int (n);
  return TRUE;
}

gboolean
airlock_json_get_bool (JsonObject *o, const char *name, gboolean *ret)
{
  JsonNode *n = member (o, name);

  if (!n || !JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_BOOLEAN)
    return FALSE;
  *ret = json_node_get_boolean (n);
  return TRUE;
}

GStrv
airlock_json_get_strv (JsonObject *o, const char *name, char *(*map) (const char *))
{
  JsonArray *a = airlock_json_get_array (o, name);
  GPtrArray *out;

  if (!a)
    return NULL;
  out = g_ptr_array_new ();
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      JsonNode *n = json_array_get_element (a, i);

      if (JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING)
        g_ptr_array_add (out, map ? map (json_node_get_string (n)) : g_strdup (json_node_get_string (n)));
    }
  g_ptr_array_add (out, NULL);
  return (GStrv) g_ptr_array_free (out, FALSE);
}

char *
airlock_hex_encode (const guint8 *bytes, gsize n)
{
  static const char digits[] = "0123456789abcdef";
  char *out = g_malloc (2 * n + 1);

  for (gsize i = 0; i < n; i++)
    {
      out[2 * i] = digits[bytes[i] >> 4];
      out[2 * i + 1] = digits[bytes[i] & 0xf];
    }
  out[2 * n] = '\0';
  return out;
}

gboolean
airlock_hex_decode (const char *hex, guint8 *out, gsize n)
{
  if (!hex || strlen (hex) != n * 2)
    return FALSE;
  for (gsize i = 0; i < n; i++)
    {
      int hi = g_ascii_xdigit_value (hex[2 * i]), lo = g_ascii_xdigit_value (hex[2 * i + 1]);

      if (hi < 0 || lo < 0)
        return FALSE;
      out[i] = (guint8) (hi << 4 | lo);
    }
  return TRUE;
}
