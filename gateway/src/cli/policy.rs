//! `toolgate policy explain`: what the policy in a configuration decides for one user, site
//! and tool (or context), and why. The dashboard's effective-permissions page will show the
//! same explanation.

use crate::config::{Config, SiteId};
use crate::policy_store::reload;
use policy::{ContextName, GroupName, Subject, ToolAnnotations, ToolRef, UserId};

/// The question to explain.
#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    /// The gateway configuration whose policy is asked.
    #[arg(long, short)]
    pub config: std::path::PathBuf,
    /// The user id.
    #[arg(long)]
    pub user: String,
    /// The user's email address.
    #[arg(long)]
    pub email: Option<String>,
    /// The user's groups, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "")]
    pub groups: Vec<String>,
    /// The site id (from the configuration).
    #[arg(long)]
    pub site: String,
    /// The tool asked about.
    #[arg(long, required_unless_present = "context", conflicts_with = "context")]
    pub tool: Option<String>,
    /// The call's arguments as JSON; without them the catalog decision is shown.
    #[arg(long, requires = "tool")]
    pub args: Option<String>,
    /// Treat the tool as marked `consequentialHint` by its page.
    #[arg(long, requires = "tool")]
    pub consequential: bool,
    /// The context asked about (instead of a tool).
    #[arg(long)]
    pub context: Option<String>,
}

/// Runs the explanation and renders it as text.
pub fn explain(args: &ExplainArgs) -> anyhow::Result<String> {
    let config = Config::load(&args.config)?;
    let site = SiteId::new(args.site.clone());
    if !config.site_ids().contains(&site) {
        anyhow::bail!("no site `{}` in {}", args.site, args.config.display());
    }
    let policy = reload::load(&config)?;
    let subject = Subject {
        user: UserId::new(args.user.clone()),
        email: args.email.clone(),
        groups: args
            .groups
            .iter()
            .filter(|group| !group.is_empty())
            .map(|group| GroupName::new(group.clone()))
            .collect(),
    };
    let view = policy.view(&subject, &site);
    let (decision, explanation) = match (&args.tool, &args.context) {
        (Some(tool), _) => {
            let mut tool = ToolRef::named(tool.clone());
            tool.annotations = ToolAnnotations { consequential: args.consequential, ..tool.annotations };
            let (decision, explanation) = match &args.args {
                Some(json) => {
                    let arguments: serde_json::Value = serde_json::from_str(json)
                        .map_err(|error| anyhow::anyhow!("--args is not JSON: {error}"))?;
                    view.tool_call(&tool, &arguments)
                }
                None => view.tool(&tool),
            };
            (decision.to_string(), explanation)
        }
        (None, Some(context)) => {
            let (decision, explanation) = view.context(&ContextName::new(context.clone()));
            (decision.to_string(), explanation)
        }
        (None, None) => anyhow::bail!("give --tool or --context"),
    };
    Ok(format!("decision: {decision}\n{explanation}"))
}
