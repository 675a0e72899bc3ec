import Foundation
import SwiftDALConnection
import SwiftDALTestSupport

@testable import SwiftDALSQLite

func makeUsersTable(_ db: Database) throws {
    try db.executeScript(
        """
        CREATE TABLE users(
          id INTEGER PRIMARY KEY,
          name TEXT NOT NULL,
          email TEXT UNIQUE,
          age INTEGER CHECK (age >= 0),
          data BLOB
        );
        """)
}
