//! Typed tools: a tool declares a Rust argument type; its JSON Schema and the parsing of the
//! model's arguments both come from that type.

use crate::tool::{Tool, ToolContext, ToolError, ToolSpec};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use suzent_permissions::ToolAccess;

/// The JSON Schema of an argument type, as sent to the model: an object schema with `type`,
/// `properties` and `required` (both always present), without the `$schema` and `title` keys.
/// Doc comments on the fields become their descriptions.
pub fn args_schema<A: JsonSchema>() -> Value {
    let schema = schemars::schema_for!(A);
    let mut value = schema.to_value();
    let Value::Object(map) = &mut value else {
        return empty_object_schema();
    };
    map.remove("$schema");
    map.remove("title");
    map.insert("type".into(), Value::String("object".into()));
    map.entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    map.entry("required")
        .or_insert_with(|| Value::Array(vec![]));
    value
}

fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object", "properties": {}, "required": []})
}

/// Parses a tool's arguments into its argument type. Errors are
/// [`ToolError::InvalidArguments`] naming the offending field.
pub fn parse_args<A: DeserializeOwned>(args: &Value) -> Result<A, ToolError> {
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path.is_empty() || path == "." {
            ToolError::InvalidArguments(inner.to_string())
        } else {
            ToolError::InvalidArguments(format!("field `{path}`: {inner}"))
        }
    })
}

/// A tool with a typed argument struct. Every `TypedTool` is a [`Tool`]: the arguments are
/// parsed (strictly, naming the bad field) before `access` and `call` see them.
///
/// ```
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use suzent_permissions::ToolAccess;
/// use suzent_tools::{ToolContext, ToolError, ToolSpec, TypedTool};
///
/// /// Arguments of `echo`.
/// #[derive(Deserialize, JsonSchema)]
/// #[serde(deny_unknown_fields)]
/// struct EchoArgs {
///     /// The text to send back.
///     text: String,
/// }
///
/// struct EchoTool(ToolSpec);
///
/// #[async_trait::async_trait]
/// impl TypedTool for EchoTool {
///     type Args = EchoArgs;
///     fn spec(&self) -> &ToolSpec { &self.0 }
///     fn access(&self, _: &EchoArgs, _: &ToolContext) -> Result<ToolAccess, ToolError> {
///         Ok(ToolAccess::Other)
///     }
///     async fn call(&self, args: EchoArgs, _: &ToolContext) -> Result<String, ToolError> {
///         Ok(args.text)
///     }
/// }
///
/// let tool = EchoTool(ToolSpec::new::<EchoArgs>("echo", "EchoTool", "meta", "Echo", "Echoes."));
/// assert_eq!(tool.0.parameters["required"][0], "text");
/// ```
#[async_trait]
pub trait TypedTool: Send + Sync + 'static {
    /// The argument type (`Deserialize` + `JsonSchema`, `#[serde(deny_unknown_fields)]`).
    type Args: DeserializeOwned + JsonSchema + Send;

    /// The static description; build it with [`ToolSpec::new::<Self::Args>`](ToolSpec::new).
    fn spec(&self) -> &ToolSpec;

    /// What a call with these arguments touches (see [`Tool::access`]).
    fn access(&self, args: &Self::Args, ctx: &ToolContext) -> Result<ToolAccess, ToolError>;

    /// Whether this call asks before running when nothing else decides (see
    /// [`Tool::needs_approval`]). Default: the spec's `requires_approval`.
    fn needs_approval(&self, args: &Self::Args, ctx: &ToolContext) -> bool {
        let _ = (args, ctx);
        TypedTool::spec(self).requires_approval
    }

    /// Runs the call (see [`Tool::call`]).
    async fn call(&self, args: Self::Args, ctx: &ToolContext) -> Result<String, ToolError>;
}

#[async_trait]
impl<T: TypedTool> Tool for T {
    fn spec(&self) -> &ToolSpec {
        TypedTool::spec(self)
    }

    fn access(&self, args: &Value, ctx: &ToolContext) -> Result<ToolAccess, ToolError> {
        let parsed: T::Args = parse_args(args)?;
        TypedTool::access(self, &parsed, ctx)
    }

    fn needs_approval(&self, args: &Value, ctx: &ToolContext) -> bool {
        match parse_args::<T::Args>(args) {
            Ok(parsed) => TypedTool::needs_approval(self, &parsed, ctx),
            Err(_) => TypedTool::spec(self).requires_approval,
        }
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let parsed: T::Args = parse_args(&args)?;
        TypedTool::call(self, parsed, ctx).await
    }
}
