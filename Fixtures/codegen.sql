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
    extra,
    status TEXT NOT NULL DEFAULT 'draft',
    created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    lang TEXT DEFAULT 'en'
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

-- A TEXT key is required (only a rowid table's INTEGER PRIMARY KEY is assigned by SQLite);
-- exact numbers are Decimal; untyped and TIME columns are DatabaseValue, Optional when nullable.
CREATE TABLE ledger (
    code TEXT PRIMARY KEY,
    amount NUMERIC(12, 2) NOT NULL,
    fee MONEY,
    rate DECIMAL,
    memo,
    tag NOT NULL,
    at TIME
);

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

-- Column names that are members of what the entity conforms to (Entity, Hashable and
-- Equatable, Sendable) or names the generated code itself uses; `==` leaves no name at all.
CREATE TABLE members (
    id INTEGER PRIMARY KEY,
    "hashValue" TEXT NOT NULL,
    "hash" TEXT,
    "tableName" TEXT,
    "primaryKey" TEXT,
    "columnNames" TEXT,
    "tableDefinition" TEXT,
    "encodeColumns" TEXT,
    "row" TEXT,
    "columns" TEXT,
    "==" TEXT,
    "hashValueColumn" TEXT
);

-- Swift keywords, reserved and contextual (`Self` becomes `self`, which a parameter cannot
-- be called), `_`, and names that look like attributes or compiler directives. SQLite
-- compares ASCII names case-insensitively: `Self` and `self` cannot both be columns.
CREATE TABLE keywords (
    "init" TEXT PRIMARY KEY NOT NULL,
    "deinit" TEXT, "subscript" TEXT, "associatedtype" TEXT, "Self" TEXT, "Protocol" TEXT, "Type" TEXT, "_" TEXT,
    "await" TEXT, "async" TEXT, "some" TEXT, "Any" TEXT, "inout" TEXT, "let" TEXT, "var" TEXT, "where" TEXT,
    "is" TEXT, "as" TEXT, "in" TEXT, "true" TEXT, "nil" TEXT, "super" TEXT, "static" TEXT, "throws" TEXT,
    "operator" TEXT, "precedencegroup" TEXT, "fileprivate" TEXT, "get" TEXT, "willSet" TEXT, "consuming" TEXT,
    "isolated" TEXT, "unsafe" TEXT, "package" TEXT, "@objc" TEXT, "@available(*, unavailable)" TEXT, "#if" TEXT,
    "__shared" TEXT
);

-- Names that differ only in case or punctuation: distinct properties, numbered in column order.
CREATE TABLE "look-alikes" (
    "user_id" INTEGER PRIMARY KEY,
    "UserID" TEXT NOT NULL,
    "user id" TEXT,
    "user-id" TEXT,
    "user.id" TEXT
);

-- Names without ASCII letters keep the characters Swift accepts in identifiers: letters of
-- any script, emoji, and digits and combining marks after the first character (a name
-- that starts with one gets a prefix). Tables `客户` and `客户!` differ only in a
-- character Swift drops: the second gets numbered type names, listed in the header.
CREATE TABLE 客户 (
    编号 TEXT PRIMARY KEY NOT NULL,
    名字 TEXT NOT NULL,
    "1号" INTEGER,
    "😀" TEXT,
    "́x" TEXT
);
CREATE TABLE "客户!" (编号 INTEGER PRIMARY KEY, 备注 TEXT);

-- SQLite compares only ASCII letters case-insensitively, so `Émile` and `émile` are two
-- columns; in camel case both are `émile`, and the second is numbered.
CREATE TABLE casing (id INTEGER PRIMARY KEY, "Émile" TEXT, "émile" TEXT);

-- No primary key: BaseDAL updates and deletes by key, so the generator writes a read-only
-- DAL (ReadOnlyDAL: finds, counts, paging) and names it in the header.
CREATE TABLE visits (page TEXT, at DATETIME);

-- A view: a read-only DAL too; its columns are nullable as far as SQLite says.
CREATE VIEW article_summary AS
    SELECT a.id AS article_id, a.title, COUNT(t.tag) AS tag_count, a.price * 2 AS double_price
    FROM articles a LEFT JOIN article_tags t ON t.article_id = a.id
    GROUP BY a.id;
