#!/usr/bin/env python3
"""Derives the EWS schema subset the listener's requests are validated against (issue #35).

Usage: derive_ews_xsd.py TYPES_XSD MESSAGES_XSD OUT_DIR SOURCE_NOTE

TYPES_XSD and MESSAGES_XSD are Microsoft's published EWS schemas (types.xsd, messages.xsd);
SOURCE_NOTE says where they were taken from (repository, path, commit) and goes into the header
of both outputs. OUT_DIR receives types.subset.xsd and messages.subset.xsd.

Kept: every top-level definition (element, attribute, complexType, simpleType, group,
attributeGroup) reachable from ROOTS through type, base, ref, itemType, memberTypes and
substitutionGroup, plus every element of a kept substitution group (so t:Path still admits
t:FieldURI, t:IndexedFieldURI and t:ExtendedFieldURI). A kept definition is copied byte for
byte from the source; nothing inside it is changed. Besides a header comment, the only changes
are the imports: the messages schema's import of the types schema points at the subset's file,
and the types schema's import of the xml namespace is left out (the script stops if a kept
definition uses xml:lang). Standard library only.
"""

import os
import sys
import textwrap
import xml.parsers.expat

XS = "http://www.w3.org/2001/XMLSchema"
TYPES = "http://schemas.microsoft.com/exchange/services/2006/types"
MESSAGES = "http://schemas.microsoft.com/exchange/services/2006/messages"
XML = "http://www.w3.org/XML/1998/namespace"

# The requests' body elements and their header. Not the answers': FindItemResponse and
# GetItemResponse reach 461 of the 863 types definitions, among them ArrayOfTransitionsType,
# whose content model is not deterministic (t:Transition after its own substitution group's
# members), so libxml2 refuses to compile that subset, as it refuses the whole schema.
ROOTS = [
    ("element", MESSAGES, "FindItem"),
    ("element", MESSAGES, "GetItem"),
    ("element", TYPES, "RequestServerVersion"),
]

KINDS = {
    "element": "element",
    "attribute": "attribute",
    "complexType": "type",
    "simpleType": "type",
    "group": "group",
    "attributeGroup": "attributeGroup",
}
# The symbol space a ref= points into, by the referring element's local name.
REF_KINDS = {
    "element": "element",
    "attribute": "attribute",
    "group": "group",
    "attributeGroup": "attributeGroup",
}


class Schema:
    """One schema file: its top-level components with their byte ranges and references."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        self.target = None
        self.header_start = None  # the <xs:schema ...> start tag
        self.header_end = None  # just after the <xs:schema ...> start tag
        self.close_start = None  # the </xs:schema> tag
        self.components = {}  # (kind, ns, name) -> [start, end]
        self.order = []
        self.refs = {}  # key -> set of keys
        self.heads = {}  # element key -> substitution group head key
        self.imports = []  # [start, end] of top-level xs:import
        self._parse()

    def _parse(self):
        parser = xml.parsers.expat.ParserCreate(namespace_separator=" ")
        parser.buffer_text = False
        # QName values in attributes need the prefixes in scope.
        scopes = [{"xml": XML}]
        pending = []
        ends = []
        depth = 0
        current = None

        def on_ns(prefix, uri):
            pending.append((prefix or "", uri))

        def resolve(qname, scope):
            prefix, _, local = qname.rpartition(":")
            return (scope.get(prefix, ""), local)

        def on_start(name, attrs):
            nonlocal depth, current
            scope = dict(scopes[-1])
            scope.update(pending)
            pending.clear()
            scopes.append(scope)
            ns, _, local = name.partition(" ")
            start = parser.CurrentByteIndex
            tag_end = self.data.index(b">", start) + 1
            # An empty-element tag's end event comes after the tag: its end is the tag's.
            ends.append(tag_end if self.data[tag_end - 2 : tag_end] == b"/>" else None)
            if depth == 0:
                self.target = attrs.get("targetNamespace")
                self.header_start = start
                self.header_end = tag_end
            elif depth == 1 and ns == XS:
                if local in KINDS:
                    key = (KINDS[local], self.target, attrs["name"])
                    self.components[key] = [start, None]
                    self.order.append(key)
                    self.refs[key] = set()
                    current = key
                    if local == "element" and "substitutionGroup" in attrs:
                        self.heads[key] = ("element",) + resolve(attrs["substitutionGroup"], scope)
                elif local == "import":
                    self.imports.append([start, None])
                    current = "import"
            if current not in (None, "import") and ns == XS:
                out = self.refs[current]
                for attr in ("type", "base", "itemType"):
                    if attr in attrs:
                        out.add(("type",) + resolve(attrs[attr], scope))
                if "memberTypes" in attrs:
                    for member in attrs["memberTypes"].split():
                        out.add(("type",) + resolve(member, scope))
                if "ref" in attrs and local in REF_KINDS:
                    out.add((REF_KINDS[local],) + resolve(attrs["ref"], scope))
                if "substitutionGroup" in attrs:
                    out.add(("element",) + resolve(attrs["substitutionGroup"], scope))
            depth += 1

        def on_end(name):
            nonlocal depth, current
            depth -= 1
            scopes.pop()
            at = parser.CurrentByteIndex
            end = ends.pop()
            if depth == 1 and current is not None:
                if end is None:
                    end = self.data.index(b">", at) + 1
                if current == "import":
                    self.imports[-1][1] = end
                else:
                    self.components[current][1] = end
                current = None
            elif depth == 0:
                self.close_start = at

        parser.StartNamespaceDeclHandler = on_ns
        parser.StartElementHandler = on_start
        parser.EndElementHandler = on_end
        parser.Parse(self.data, True)

    def text(self, key):
        start, end = self.components[key]
        return self.data[start:end].decode("utf-8")


def closure(schemas):
    defined = {}
    members = {}
    for schema in schemas:
        for key in schema.components:
            defined[key] = schema
        for member, head in schema.heads.items():
            members.setdefault(head, set()).add(member)
    keep = set()
    todo = list(ROOTS)
    missing = set()
    while todo:
        key = todo.pop()
        if key in keep:
            continue
        if key[1] in (XS, XML):
            continue  # built in, or the xml namespace's (checked by the caller)
        schema = defined.get(key)
        if schema is None:
            missing.add(key)
            continue
        keep.add(key)
        todo.extend(schema.refs[key])
        todo.extend(members.get(key, ()))
    if missing:
        sys.exit("not defined in the sources: %s" % sorted(missing))
    return keep


def write(schema, keep, out_path, note, imports):
    head = schema.data[schema.header_start : schema.header_end].decode("utf-8")
    kept = [k for k in schema.order if k in keep]
    about = (
        "A subset of Microsoft's published Exchange Web Services schema, derived by "
        "derive_ews_xsd.py (beside this file) from %s. Kept: the definitions reachable from "
        "the FindItem and GetItem requests and the RequestServerVersion header (%d of %d "
        "top-level definitions), each copied unchanged. Do not edit by hand: run the script "
        "again." % (note, len(kept), len(schema.order))
    )
    lines = ['<?xml version="1.0" encoding="utf-8"?>', "<!--"]
    lines += textwrap.wrap(about, width=96, initial_indent="  ", subsequent_indent="  ")
    lines += ["-->", head]
    for old in imports:
        lines.append("    " + old)
    for key in kept:
        lines.append("    " + schema.text(key))
    lines.append("</xs:schema>")
    with open(out_path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(line.replace("\r\n", "\n") for line in lines) + "\n")
    return len(kept), len(schema.order)


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    types_path, messages_path, out_dir, note = sys.argv[1:]
    types = Schema(types_path)
    messages = Schema(messages_path)
    if types.target != TYPES or messages.target != MESSAGES:
        sys.exit("these are not the EWS types and messages schemas")
    keep = closure([types, messages])
    # The types schema's only import is the xml namespace's (for xml:lang); it is kept only if
    # a kept definition uses that namespace.
    types_imports = []
    if any(ref[1] == XML for k in keep for ref in types.refs.get(k, ())):
        sys.exit("a kept definition uses the xml namespace: add its schema")
    messages_imports = [
        '<xs:import namespace="%s" schemaLocation="types.subset.xsd"/>' % TYPES
    ]
    for name, schema, imports in (
        ("types.subset.xsd", types, types_imports),
        ("messages.subset.xsd", messages, messages_imports),
    ):
        kept, total = write(schema, keep, os.path.join(out_dir, name), note, imports)
        print("%s: %d of %d top-level definitions" % (name, kept, total))


if __name__ == "__main__":
    main()
