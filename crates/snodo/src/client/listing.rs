//! Whole listings: every page of a list method, followed by `nextCursor`
//! within the client's bounds on pages, items and bytes (all pages
//! together). The page that goes past a bound ends the listing: no further
//! page is asked for, and what was read is dropped.

use std::collections::HashSet;

use serde_json::Value;

use super::{ClientError, ClientLimit, ProtocolErrorKind};

/// The member of a list method's result that holds its items.
fn items_key(method: &str) -> Option<&'static str> {
    Some(match method {
        "tools/list" => "tools",
        "resources/list" => "resources",
        "resources/templates/list" => "resourceTemplates",
        "prompts/list" => "prompts",
        "skills/list" => "skills",
        _ => return None,
    })
}

/// What one listing has taken so far, against the client's bounds.
struct Budget {
    items: usize,
    bytes: usize,
    max_items: usize,
    max_bytes: usize,
}

impl Budget {
    /// Charges one page's items; fails once the listing goes past a bound.
    fn charge(&mut self, method: &str, page: &[Value]) -> Result<(), ClientError> {
        self.items += page.len();
        if self.items > self.max_items {
            return Err(ClientError::limit(
                ClientLimit::ListingItems,
                self.max_items,
                format!("{method} lists more than {} items", self.max_items),
            ));
        }
        for item in page {
            self.bytes += crate::wire::encoded_len(item);
            if self.bytes > self.max_bytes {
                return Err(ClientError::limit(
                    ClientLimit::ListingBytes,
                    self.max_bytes,
                    format!("{method} lists more than {} bytes of items", self.max_bytes),
                ));
            }
        }
        Ok(())
    }
}

/// How far one listing may go.
#[derive(Debug, Clone, Copy)]
pub(super) struct Bounds {
    /// Pages read at most.
    pub(super) max_pages: usize,
    /// Items, all pages together.
    pub(super) max_items: usize,
    /// Bytes of items as JSON, all pages together.
    pub(super) max_bytes: usize,
}

/// Every item of list method `method`, following `nextCursor` to the end
/// within `bounds`; `fetch` reads the page after a cursor (`None`: the
/// first).
pub(super) async fn all<P, F>(
    method: &str,
    bounds: Bounds,
    mut fetch: P,
) -> Result<Vec<Value>, ClientError>
where
    P: FnMut(Option<String>) -> F,
    F: Future<Output = Result<Value, ClientError>>,
{
    let key = items_key(method)
        .ok_or_else(|| ClientError::invalid_argument(format!("{method} is not a list method")))?;
    let mut budget = Budget {
        items: 0,
        bytes: 0,
        max_items: bounds.max_items,
        max_bytes: bounds.max_bytes,
    };
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    for _ in 0..bounds.max_pages {
        let mut page = fetch(cursor.clone()).await?;
        match page.get_mut(key).map(Value::take) {
            Some(Value::Array(list)) => {
                budget.charge(method, &list)?;
                items.extend(list);
            }
            None | Some(Value::Null) => {}
            Some(_) => {
                return Err(ClientError::protocol(
                    ProtocolErrorKind::MalformedResult,
                    format!("{method}: {key} must be an array"),
                ));
            }
        }
        match page.get("nextCursor") {
            Some(Value::String(next)) => {
                if !seen.insert(next.clone()) {
                    return Err(ClientError::protocol(
                        ProtocolErrorKind::Pagination,
                        format!("{method} repeated the cursor {next:?}"),
                    ));
                }
                cursor = Some(next.clone());
            }
            _ => return Ok(items),
        }
    }
    Err(ClientError::protocol(
        ProtocolErrorKind::Pagination,
        format!("{method} has more than {} pages", bounds.max_pages),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn budget(max_items: usize, max_bytes: usize) -> Budget {
        Budget {
            items: 0,
            bytes: 0,
            max_items,
            max_bytes,
        }
    }

    #[test]
    fn the_budget_counts_items_and_their_compact_json_across_pages() {
        let item = json!({"name": "x"});
        assert_eq!(crate::wire::encoded_len(&item), r#"{"name":"x"}"#.len());
        let mut b = budget(3, 1000);
        b.charge("tools/list", &[item.clone(), item.clone()])
            .unwrap();
        b.charge("tools/list", std::slice::from_ref(&item)).unwrap();
        let e = b
            .charge("tools/list", std::slice::from_ref(&item))
            .unwrap_err();
        assert_eq!(e.exceeded_limit(), Some(ClientLimit::ListingItems));
        assert_eq!(
            e.to_string(),
            "limit exceeded: tools/list lists more than 3 items (max_listing_items = 3)"
        );
        let mut b = budget(100, 2 * 12);
        b.charge("prompts/list", &[item.clone(), item.clone()])
            .unwrap();
        let e = b.charge("prompts/list", &[item]).unwrap_err();
        assert_eq!(e.exceeded_limit(), Some(ClientLimit::ListingBytes));
        assert!(e.to_string().contains("max_listing_bytes = 24"), "{e}");
    }
}
