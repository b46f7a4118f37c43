//! placeholder until the matcher lands
#![allow(missing_docs, unreachable_pub, dead_code)]
#[derive(Debug, Clone)]
pub struct UriTemplate(String);
#[derive(Debug, Clone)]
pub struct TemplateError(String);
impl std::fmt::Display for TemplateError { fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { f.write_str(&self.0) } }
impl std::error::Error for TemplateError {}
impl UriTemplate {
    pub fn parse(t: &str) -> Result<Self, TemplateError> { Ok(Self(t.into())) }
    pub fn as_str(&self) -> &str { &self.0 }
    pub fn matches(&self, uri: &str) -> Option<Vec<(String, String)>> { (uri == self.0).then(Vec::new) }
}
