"""Replace the generated block of a Markdown file, between the markers
<!-- BEGIN tools/NAME --> and <!-- END tools/NAME -->, or print the text."""


def emit(text, path, generator):
    if not path:
        print(text)
        return
    begin, end = f"<!-- BEGIN tools/{generator} -->\n", f"<!-- END tools/{generator} -->\n"
    doc = open(path).read()
    a, b = doc.index(begin) + len(begin), doc.index(end)
    open(path, "w").write(doc[:a] + text + doc[b:])
    print("wrote", path)
