/// Paging state, in the classic BaseDAL shape: the page wanted (1-based), its size, and
/// the total number of matching records once a query has run.
///
/// For example:
///
/// ```swift
/// let page = try users.findWithPager(condition: "age >= \(18)", pager: PagerInfo(pageIndex: 2, pageSize: 20))
/// print("page \(page.pager.pageIndex) of \(page.pager.pageCount): \(page.items.count) users")
/// ```
public struct PagerInfo: Sendable, Hashable {
    /// The page number, from 1.
    public var pageIndex: Int
    /// The number of records per page (at least 1).
    public var pageSize: Int
    /// The number of records matching the condition, over all pages (filled by the query).
    public var recordCount: Int

    /// A pager for page `pageIndex` (from 1) of `pageSize` records.
    ///
    /// For example, `PagerInfo(pageIndex: 1, pageSize: 50)`.
    public init(pageIndex: Int = 1, pageSize: Int = 20, recordCount: Int = 0) {
        self.pageIndex = pageIndex
        self.pageSize = pageSize
        self.recordCount = recordCount
    }

    /// The number of pages (0 when there are no records).
    public var pageCount: Int {
        guard pageSize > 0, recordCount > 0 else { return 0 }
        return recordCount / pageSize + (recordCount % pageSize == 0 ? 0 : 1)
    }

    /// The number of records before this page (`Int.max` when that many cannot be
    /// counted: such a page is past every table's end).
    public var offset: Int {
        let (product, overflow) = (pageIndex > 1 ? pageIndex - 1 : 0).multipliedReportingOverflow(by: max(pageSize, 0))
        return overflow ? Int.max : product
    }
}

/// One page of entities and the pager describing it (with the total record count).
///
/// For example, `for user in page.items { … }`.
public struct Page<Element: Sendable>: Sendable {
    /// The entities of this page.
    public var items: [Element]
    /// The pager, with ``PagerInfo/recordCount`` set.
    public var pager: PagerInfo

    /// A page of `items` described by `pager`.
    public init(items: [Element], pager: PagerInfo) {
        self.items = items
        self.pager = pager
    }
}
