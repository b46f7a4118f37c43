//! Serving a [`Skills`] set: its files as resources, and the Skills
//! extension's three methods.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::{Extension, Item, Policy};
use crate::error::HandlerError;
use crate::protocol::CacheHints;
use crate::resource::{ReadRequest, ReadResult, Resource, ResourceContents};
use crate::skills::{Child, Content, DIRECTORY_MIME, EXTENSION, Served, Skills};
use crate::tool::BoxFuture;
use crate::{Context, Error};

/// One skill file as a resource.
pub(crate) struct FileResource(pub(crate) Arc<Served>);

impl Resource for FileResource {
    fn uri(&self) -> Option<&str> {
        Some(&self.0.uri)
    }

    fn name(&self) -> &str {
        &self.0.name
    }

    fn description(&self) -> Option<&str> {
        self.0.description.as_deref()
    }

    fn mime_type(&self) -> Option<&str> {
        Some(self.0.mime)
    }

    fn size(&self) -> Option<u64> {
        Some(self.0.size)
    }

    async fn read(&self, req: ReadRequest, _cx: Context) -> Result<ReadResult, HandlerError> {
        let file = &self.0;
        let item = match &file.content {
            Content::Text(text) => ResourceContents::text(req.uri, text.as_str()),
            Content::Blob(b64) => ResourceContents::blob(req.uri, b64.as_str()),
        };
        Ok(item.with_mime_type(file.mime).into())
    }
}

/// The extension's methods over one set.
pub(crate) struct SkillsExtension {
    pub(crate) skills: Skills,
    /// The hints of `skills/list`.
    pub(crate) list_cache: CacheHints,
    /// The hints of `skills/get` (as of `resources/read`).
    pub(crate) read_cache: CacheHints,
    pub(crate) page_size: usize,
    /// The server's policy: what a principal may not see is neither listed
    /// nor got.
    pub(crate) policy: Option<Arc<dyn Policy>>,
}

const LIST: &str = "skills/list";
const GET: &str = "skills/get";
const DIRECTORY_READ: &str = "resources/directory/read";

impl Extension for SkillsExtension {
    fn name(&self) -> &str {
        EXTENSION
    }

    fn settings(&self) -> Value {
        json!({"directoryRead": true})
    }

    fn methods(&self) -> Vec<String> {
        vec![LIST.into(), GET.into(), DIRECTORY_READ.into()]
    }

    fn client_declares(&self) -> bool {
        false
    }

    fn handle<'a>(
        &'a self,
        method: &'a str,
        params: Map<String, Value>,
        cx: Context,
    ) -> BoxFuture<'a, Result<Map<String, Value>, Error>> {
        let out = match method {
            LIST => self.list(&params, &cx),
            GET => self.get(&params, &cx),
            _ => self.read_directory(&params, &cx),
        };
        Box::pin(std::future::ready(out))
    }
}

/// The `cursor` of a request: the offset it names, checked against `len`.
fn offset(params: &Map<String, Value>, len: usize) -> Result<usize, Error> {
    match params.get("cursor") {
        None | Some(Value::Null) => Ok(0),
        Some(Value::String(c)) => c
            .parse::<usize>()
            .ok()
            .filter(|&o| o > 0 && o < len)
            .ok_or_else(|| Error::invalid_params(format!("invalid cursor {c:?}"))),
        Some(_) => Err(Error::invalid_params("cursor must be a string")),
    }
}

/// The `uri` member of a request.
fn uri(params: &Map<String, Value>) -> Result<&str, Error> {
    params
        .get("uri")
        .and_then(Value::as_str)
        .ok_or_else(|| Error::invalid_params("params.uri must be a string"))
}

impl SkillsExtension {
    /// One page of `items` from `offset`, with `nextCursor` when more follow.
    fn page<T>(&self, items: &[T], offset: usize, key: &str, out: &mut Map<String, Value>)
    where
        T: serde::Serialize,
    {
        let size = self.page_size.max(1);
        let end = offset.saturating_add(size).min(items.len());
        let page = serde_json::to_value(&items[offset..end]).unwrap_or_default();
        out.insert(key.into(), page);
        if end < items.len() {
            out.insert("nextCursor".into(), end.to_string().into());
        }
    }

    /// Whether the caller of `cx` may see the resource at `uri`.
    fn visible(&self, cx: &Context, uri: &str) -> bool {
        self.policy
            .as_ref()
            .is_none_or(|p| p.can_see(cx.principal(), Item::Resource(uri)))
    }

    /// Whether the caller of `cx` may see a file below directory `dir`.
    fn visible_below(&self, cx: &Context, dir: &str) -> bool {
        self.policy.is_none()
            || self
                .skills
                .files_below(dir)
                .any(|f| self.visible(cx, &f.uri))
    }

    /// Whether the caller of `cx` may see the skill and every file it lists
    /// (an entry names its files, their sizes and digests).
    fn visible_skill(&self, cx: &Context, skill: &crate::skills::Skill) -> bool {
        self.visible(cx, &skill.uri)
            && match &skill.resources {
                crate::skills::SkillFiles::Listed(files) => {
                    files.iter().all(|f| self.visible(cx, &f.uri))
                }
                _ => true,
            }
    }

    fn list(&self, params: &Map<String, Value>, cx: &Context) -> Result<Map<String, Value>, Error> {
        let mut entries = self.skills.entries();
        entries.retain(|s| self.visible_skill(cx, s));
        let from = offset(params, entries.len())?;
        let mut out = Map::new();
        self.page(&entries, from, "skills", &mut out);
        self.list_cache.apply(&mut out);
        Ok(out)
    }

    fn get(&self, params: &Map<String, Value>, cx: &Context) -> Result<Map<String, Value>, Error> {
        let uri = uri(params)?;
        let skill = self
            .skills
            .get(uri)
            .filter(|skill| self.visible_skill(cx, skill))
            .ok_or_else(|| Error::invalid_params(format!("No skill is served at {uri}")))?;
        let mut out = Map::new();
        out.insert(
            "skill".into(),
            serde_json::to_value(skill).unwrap_or_default(),
        );
        self.read_cache.apply(&mut out);
        Ok(out)
    }

    fn read_directory(
        &self,
        params: &Map<String, Value>,
        cx: &Context,
    ) -> Result<Map<String, Value>, Error> {
        let uri = uri(params)?;
        let children = self
            .skills
            .directory(uri)
            .filter(|_| self.visible_below(cx, uri))
            .ok_or_else(|| Error::invalid_params(format!("{uri} is not a directory resource")))?;
        let listed: Vec<Value> = children
            .iter()
            .filter(|child| match child {
                Child::Directory(dir) => self.visible_below(cx, dir),
                Child::File(file) => self.visible(cx, file),
            })
            .map(|child| match child {
                Child::Directory(dir) => json!({
                    "uri": dir,
                    "name": last_segment(dir),
                    "mimeType": DIRECTORY_MIME,
                }),
                Child::File(file) => {
                    let mut item = json!({"uri": file, "name": last_segment(file)});
                    if let Some(served) = self.skills.file(file) {
                        item["mimeType"] = served.mime.into();
                        item["size"] = served.size.into();
                    }
                    item
                }
            })
            .collect();
        let from = offset(params, listed.len())?;
        let mut out = Map::new();
        self.page(&listed, from, "resources", &mut out);
        Ok(out)
    }
}

fn last_segment(uri: &str) -> &str {
    uri.rsplit('/').next().unwrap_or(uri)
}
