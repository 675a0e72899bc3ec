import Foundation
import SampleDAL
import SwiftDAL
import SwiftDALTestSupport
import Testing

/// Users "of a tenant" by age: a scope over the sample table, for the SQL a scope adds.
private final class UsersOfAge: BaseDAL<UserInfo>, @unchecked Sendable {
    override var scope: DALScope { DALScope(tenantColumn: "age") }
}

@Suite struct ScopeSQLTests {
    @Test func tenantBoundDALsMadePerRequestShareTheSchemaTheyRead() throws {
        let sample = try Sample()
        let first = UsersOfAge(database: sample.queue, tenant: 30)
        let firstCount = try first.getRecordCount()
        let schemaReads = sample.recorder.all.count - 1
        #expect(schemaReads > 0)  // the first DAL read the table's schema
        sample.recorder.reset()
        let second = UsersOfAge(database: sample.queue, tenant: 31)
        _ = try second.getRecordCount()
        #expect(sample.recorder.all == [#"SELECT COUNT(*) FROM "users" WHERE ("age" = ?)"#])  // no schema read
        // After invalidateSchemaCache() on any of them, the next one reads it again.
        second.invalidateSchemaCache()
        sample.recorder.reset()
        #expect(try UsersOfAge(database: sample.queue, tenant: 30).getRecordCount() == firstCount)
        #expect(sample.recorder.all.count == schemaReads + 1)
        // DALs made without a tenant keep their own, as before.
        sample.recorder.reset()
        _ = try UserDAL(database: sample.queue).getRecordCount()
        #expect(sample.recorder.all.count == schemaReads + 1)
    }

    @Test func theScopeIsBoundAndTheConditionParenthesized() throws {
        let sample = try Sample()
        let thirties = UsersOfAge(database: sample.queue, tenant: 30)
        _ = try thirties.find(condition: "name = \("x") OR 1 = 1", orderBy: "name")
        #expect(
            sample.recorder.last
                == #"SELECT "id", "name", "full_name", "email", "age", "score", "bio", "avatar", "created_at" FROM "users" WHERE ((name = ? OR 1 = 1) AND "age" = ?) ORDER BY "name" ASC"#
        )
        _ = try thirties.findById(1)
        #expect(sample.recorder.last?.hasSuffix(#"FROM "users" WHERE "id" = ? AND "age" = ?"#) == true)
        _ = try thirties.updateFields(["name": "x"], key: 1)
        #expect(sample.recorder.last == #"UPDATE "users" SET "name" = ? WHERE "id" = ? AND "age" = ?"#)
        _ = try thirties.deleteByCondition("name = \("nobody")")
        #expect(sample.recorder.last == #"DELETE FROM "users" WHERE ((name = ?) AND "age" = ?)"#)
    }
}
