SELECT * FROM v_model_meta ORDER BY config_id;
