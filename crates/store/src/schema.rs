//! The tables, written by hand for both backends: migrations/{postgres,sqlite} create the same
//! columns with the same portable types (only BYTEA/BLOB, DOUBLE PRECISION/REAL and how `seq`
//! is generated differ).

diesel::table! {
    enterprises (id) {
        id -> Text,
        name -> Text,
        endpoint_limit -> BigInt,
        public_key -> Nullable<Text>,
        endpoints_version -> BigInt,
    }
}

diesel::table! {
    service_users (id) {
        id -> Text,
        enterprise_id -> Text,
        username -> Text,
        password_hash -> Text,
        role -> Text,
        disabled -> Bool,
    }
}

diesel::table! {
    access_tokens (id) {
        id -> Text,
        seq -> BigInt,
        token_hash -> Text,
        enterprise_id -> Text,
        enterprise_name -> Text,
        creation_date -> BigInt,
        expiration_date -> BigInt,
        roles -> Text,
        client_name -> Nullable<Text>,
        creator -> Nullable<Text>,
        platform_id -> Nullable<BigInt>,
        first_name -> Nullable<Text>,
        last_name -> Nullable<Text>,
        pairing_code_id -> Nullable<Text>,
        pairing_endpoint_id -> Nullable<Text>,
        client_device_type -> Nullable<Text>,
    }
}

diesel::table! {
    listener_services (id) {
        id -> Text,
        seq -> BigInt,
        enterprise_id -> Text,
        name -> Text,
        base_url -> Text,
        asset_id -> Nullable<Text>,
        external_id -> Nullable<Text>,
        location -> Nullable<Text>,
        point_of_contact -> Nullable<Text>,
        secret_key_id -> Text,
        secret_ciphertext -> Binary,
        /// `inbound` or `outbound`; an outbound listener's base_url is ''.
        connection -> Text,
    }
}

diesel::table! {
    listener_links (listener_id) {
        listener_id -> Text,
        instance -> Text,
        since_ms -> BigInt,
        version -> Nullable<Text>,
        seen_ms -> BigInt,
    }
}

diesel::table! {
    listener_checks (listener_id) {
        listener_id -> Text,
        checked_ms -> BigInt,
        answered_ms -> Nullable<BigInt>,
        version -> Nullable<Text>,
        error -> Nullable<Text>,
        error_message -> Nullable<Text>,
    }
}

diesel::table! {
    endpoints (id) {
        id -> Text,
        seq -> BigInt,
        enterprise_id -> Text,
        name -> Nullable<Text>,
        ip_address -> Nullable<Text>,
        port -> Nullable<Integer>,
        listener_service_id -> Nullable<Text>,
        control_protocol -> Nullable<Text>,
        signaling_protocol -> Nullable<Text>,
        dial_style -> Nullable<Text>,
        address_style -> Nullable<Text>,
        username -> Nullable<Text>,
        calendar_id -> Nullable<Text>,
        calendar_type -> Nullable<Text>,
        custom_data -> Nullable<Text>,
        announcement_id -> Nullable<Text>,
        asset_id -> Nullable<Text>,
        auto_join_mode -> Nullable<Text>,
        calendar_push_mode -> Nullable<Text>,
        contact_list_id -> Nullable<Text>,
        elevation -> Nullable<Double>,
        external_id -> Nullable<Text>,
        geolocation -> Nullable<Text>,
        in_meeting_controls -> Nullable<Text>,
        location -> Nullable<Text>,
        manual_meeting_dialer -> Nullable<Text>,
        meeting_privacy_mode -> Nullable<Text>,
        mesh_base_uri -> Nullable<Text>,
        point_of_contact -> Nullable<Text>,
        register_to_sip_proxy -> Nullable<Text>,
        validate_passcodes -> Nullable<Text>,
        zero_touch_type -> Nullable<Text>,
        password_key_id -> Nullable<Text>,
        password_ciphertext -> Nullable<Binary>,
    }
}

diesel::table! {
    pairing_codes (id) {
        id -> Text,
        enterprise_id -> Text,
        endpoint_id -> Text,
        code -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    paired_statuses (token_id) {
        token_id -> Text,
        enterprise_id -> Text,
        endpoint_id -> Text,
        username -> Nullable<Text>,
        first_name -> Nullable<Text>,
        last_name -> Nullable<Text>,
        client_device_type -> Nullable<Text>,
        creation_date -> BigInt,
        heartbeat_date -> BigInt,
    }
}

diesel::table! {
    endpoint_statuses (endpoint_id) {
        endpoint_id -> Text,
        enterprise_id -> Text,
        call_active -> Bool,
        reserved -> Bool,
        dialing -> Bool,
        microphone_muted -> Bool,
        last_dial_timestamp_millis -> Nullable<BigInt>,
        timestamp -> BigInt,
        join_source -> Nullable<Text>,
        join_ms -> Nullable<BigInt>,
    }
}

diesel::table! {
    call_sessions (seq) {
        seq -> BigInt,
        enterprise_id -> Text,
        endpoint_id -> Text,
        started_ms -> BigInt,
        ended_ms -> Nullable<BigInt>,
        source -> Text,
    }
}

diesel::table! {
    endpoint_inventories (endpoint_id) {
        endpoint_id -> Text,
        enterprise_id -> Text,
        attempted_ms -> BigInt,
        read_ms -> Nullable<BigInt>,
        inventory -> Nullable<Text>,
        model -> Nullable<Text>,
        software_version -> Nullable<Text>,
        failure_name -> Nullable<Text>,
        failure_message -> Nullable<Text>,
    }
}

diesel::table! {
    failures (id) {
        id -> Text,
        seq -> BigInt,
        enterprise_id -> Text,
        subject_class -> Text,
        subject_id -> Text,
        error_date -> BigInt,
        error_code -> BigInt,
        error_name -> Text,
        error_message -> Text,
        error_details -> Text,
    }
}

diesel::table! {
    audit_log (seq) {
        seq -> BigInt,
        enterprise_id -> Text,
        at_ms -> BigInt,
        actor_kind -> Text,
        actor_id -> Text,
        actor_username -> Nullable<Text>,
        actor_roles -> Text,
        operation -> Text,
        target_id -> Nullable<Text>,
        outcome -> Text,
        detail -> Nullable<Text>,
    }
}

diesel::table! {
    calendar_accounts (enterprise_id, calendar_type) {
        enterprise_id -> Text,
        calendar_type -> Text,
        base_url -> Text,
        username -> Nullable<Text>,
        password_key_id -> Nullable<Text>,
        password_ciphertext -> Nullable<Binary>,
        updated_at_ms -> BigInt,
        token_url -> Nullable<Text>,
    }
}

diesel::table! {
    auto_joins (endpoint_id, event_uid, start_ms) {
        endpoint_id -> Text,
        event_uid -> Text,
        start_ms -> BigInt,
        enterprise_id -> Text,
        holder -> Text,
        lease_until_ms -> BigInt,
        outcome -> Nullable<Text>,
        settled_at_ms -> Nullable<BigInt>,
    }
}

diesel::table! {
    webhook_subscriptions (id) {
        id -> Text,
        enterprise_id -> Text,
        url -> Text,
        event_types -> Text,
        description -> Nullable<Text>,
        secret_key_id -> Text,
        secret_ciphertext -> Binary,
        created_ms -> BigInt,
        updated_ms -> BigInt,
        paused_ms -> Nullable<BigInt>,
        paused_reason -> Nullable<Text>,
        lease_owner -> Nullable<Text>,
        lease_until_ms -> Nullable<BigInt>,
    }
}

diesel::table! {
    templates (id) {
        id -> Text,
        enterprise_id -> Text,
        name -> Text,
        name_key -> Text,
        description -> Nullable<Text>,
        settings -> Text,
        created_ms -> BigInt,
        updated_ms -> BigInt,
    }
}

diesel::table! {
    template_jobs (id) {
        id -> Text,
        enterprise_id -> Text,
        template_id -> Text,
        template_name -> Text,
        kind -> Text,
        undo_of -> Nullable<Text>,
        state -> Text,
        created_by -> Text,
        created_ms -> BigInt,
        finished_ms -> Nullable<BigInt>,
        lease_owner -> Nullable<Text>,
        lease_until_ms -> BigInt,
    }
}

diesel::table! {
    template_job_rooms (job_id, position) {
        job_id -> Text,
        position -> Integer,
        endpoint_id -> Text,
        name -> Text,
        steps -> Text,
        state -> Text,
    }
}

diesel::table! {
    template_assignments (endpoint_id) {
        endpoint_id -> Text,
        enterprise_id -> Text,
        template_id -> Text,
        assigned_ms -> BigInt,
        checked_ms -> Nullable<BigInt>,
        drift -> Nullable<Text>,
    }
}

diesel::table! {
    webhook_deliveries (seq) {
        seq -> BigInt,
        subscription_id -> Text,
        enterprise_id -> Text,
        event_id -> Text,
        event_type -> Text,
        body -> Text,
        created_ms -> BigInt,
        state -> Text,
        attempts -> Integer,
        next_attempt_ms -> Nullable<BigInt>,
        last_attempt_ms -> Nullable<BigInt>,
        last_status -> Nullable<Integer>,
        last_error -> Nullable<Text>,
        done_ms -> Nullable<BigInt>,
    }
}

diesel::table! {
    health_states (enterprise_id, subject_kind, subject_id) {
        enterprise_id -> Text,
        subject_kind -> Text,
        subject_id -> Text,
        state -> Text,
        changed_ms -> BigInt,
    }
}

diesel::table! {
    health_history (id) {
        id -> BigInt,
        enterprise_id -> Text,
        endpoint_id -> Text,
        state -> Text,
        previous_state -> Nullable<Text>,
        reasons -> Text,
        changed_ms -> BigInt,
    }
}

diesel::joinable!(endpoint_statuses -> endpoints (endpoint_id));
diesel::joinable!(call_sessions -> endpoints (endpoint_id));
diesel::joinable!(endpoint_inventories -> endpoints (endpoint_id));
diesel::joinable!(listener_links -> listener_services (listener_id));
diesel::joinable!(listener_checks -> listener_services (listener_id));
diesel::joinable!(webhook_deliveries -> webhook_subscriptions (subscription_id));
diesel::joinable!(template_job_rooms -> template_jobs (job_id));
diesel::joinable!(template_assignments -> endpoints (endpoint_id));
diesel::joinable!(template_assignments -> templates (template_id));

diesel::allow_tables_to_appear_in_same_query!(
    enterprises,
    service_users,
    access_tokens,
    listener_services,
    listener_links,
    listener_checks,
    endpoints,
    pairing_codes,
    paired_statuses,
    endpoint_statuses,
    failures,
    audit_log,
    calendar_accounts,
    auto_joins,
    call_sessions,
    endpoint_inventories,
    webhook_subscriptions,
    webhook_deliveries,
    health_states,
    health_history,
    templates,
    template_jobs,
    template_job_rooms,
    template_assignments,
);
