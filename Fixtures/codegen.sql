-- Tables that exercise swiftdal-gen's naming and type rules. The generated code is
-- Tests/SwiftDALTests/Generated/CodegenTables.swift (CodegenTests checks it is current):
--   swift run swiftdal-gen --schema Fixtures/codegen.sql --internal --output Tests/SwiftDALTests/Generated/CodegenTables.swift

CREATE TABLE articles (
    id INTEGER PRIMARY KEY,
    title VARCHAR(200) NOT NULL,
    body TEXT,
    author_id INTEGER NOT NULL,
    is_published BOOLEAN NOT NULL DEFAULT 0,
    published_at DATETIME,
    rating REAL,
    price DECIMAL(10, 2),
    cover BLOB,
    extra
);

-- A composite key, WITHOUT ROWID.
CREATE TABLE article_tags (
    article_id INTEGER NOT NULL REFERENCES articles (id) ON DELETE CASCADE,
    tag TEXT NOT NULL,
    PRIMARY KEY (article_id, tag)
) WITHOUT ROWID;

-- An INTEGER key that is not the rowid (WITHOUT ROWID: SQLite assigns nothing).
CREATE TABLE categories (
    code INTEGER PRIMARY KEY,
    name TEXT NOT NULL
) WITHOUT ROWID;

-- Names that are not Swift identifiers, reserved words, and two columns with one camel-case name.
CREATE TABLE "event log" (
    "event id" TEXT PRIMARY KEY NOT NULL,
    "default" TEXT NOT NULL,
    "class" INTEGER,
    "2fa" BOOLEAN,
    "userId" INTEGER,
    "user_id" INTEGER,
    "row" TEXT,
    "columns" TEXT,
    "self" TEXT,
    "Type" INTEGER
);

-- Quotes, a backslash and a line break in names: they must stay inside literals and comments.
CREATE TABLE "odd ""name"" \ x" (
    "line
break */ ""q""" TEXT PRIMARY KEY NOT NULL
);

-- No primary key: BaseDAL needs one, so the generator leaves it out (and says so).
CREATE TABLE notes (body TEXT);
