//! The network: packets, links with their egress queues, nodes and routing.

pub mod datapath;
pub mod link;
pub mod link_model;
pub mod packet;
pub mod route;
pub mod topology;
